extension CallTargetRenames {
    /// The functions protocol 5 renamed. The job layer moved to its own module
    /// (`SpokesJobs`): the node's job desk (`jobs`) from the bike module, the desk for jobs
    /// of tasks (`task-jobs`) and its listener from this one; and the job desk's bike calls
    /// (submit, report, network, stations) went to the bike desk (`bikejobs`). The old
    /// names are release 0.3.0's (0.2's are the same); both lists were printed by
    /// `Scripts/call-targets`.
    public static let current = CallTargetRenames(since: 5, renames: [
        // JobService.cancel
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC6cancel3job6originAC12CancellationVSgSS_AC12CancelOriginOtYaKFTE", oldRecipient: "jobs",
               newTarget: "$s10SpokesJobs10JobServiceC6cancel3job6originAC12CancellationVSgSS_AC12CancelOriginOtYaKFTE", newRecipient: "jobs"),
        // JobService.cancelHere
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC10cancelHere3job6originAC12CancellationVSgSS_AC12CancelOriginOtYaKFTE", oldRecipient: "jobs",
               newTarget: "$s10SpokesJobs10JobServiceC10cancelHere3job6originAC12CancellationVSgSS_AC12CancelOriginOtYaKFTE", newRecipient: "jobs"),
        // JobService.clusterJobs
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC11clusterJobsAC07ClusterF0VyYaKFTE", oldRecipient: "jobs",
               newTarget: "$s10SpokesJobs10JobServiceC07clusterB0AC07ClusterB0VyYaKFTE", newRecipient: "jobs"),
        // JobService.finishedJobs
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC12finishedJobsSayAA0C5StoreC7SummaryVGyYaKFTE", oldRecipient: "jobs",
               newTarget: "$s10SpokesJobs10JobServiceC08finishedB0SayAA0C5StoreC7SummaryVGyYaKFTE", newRecipient: "jobs"),
        // JobService.holdsReplica
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC12holdsReplica2ofSbSS_tYaKFTE", oldRecipient: "jobs",
               newTarget: "$s10SpokesJobs10JobServiceC12holdsReplica2ofSbSS_tYaKFTE", newRecipient: "jobs"),
        // JobService.jobs
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC4jobsSayAA0C5StoreC7SummaryVGyYaKFTE", oldRecipient: "jobs",
               newTarget: "$s10SpokesJobs10JobServiceC4jobsSayAA0C5StoreC7SummaryVGyYaKFTE", newRecipient: "jobs"),
        // JobService.locate
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC6locate3jobAC0C8LocationVSgSS_tYaKFTE", oldRecipient: "jobs",
               newTarget: "$s10SpokesJobs10JobServiceC6locate3jobAC0C8LocationVSgSS_tYaKFTE", newRecipient: "jobs"),
        // JobService.runningJobs
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC11runningJobsSaySSGyYaKFTE", oldRecipient: "jobs",
               newTarget: "$s10SpokesJobs10JobServiceC07runningB0SaySSGyYaKFTE", newRecipient: "jobs"),
        // JobService.networkAtStart -> BikeJobService
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC14networkAtStart2ofAC07NetworkfG0VSgSS_tYaKFTE", oldRecipient: "jobs",
               newTarget: "$s11SpokesBikes14BikeJobServiceC14networkAtStart2ofAC07NetworkgH0VSgSS_tYaKFTE", newRecipient: "bikejobs"),
        // JobService.report -> BikeJobService
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC6report2ofAA16SimulationReportVSgSS_tYaKFTE", oldRecipient: "jobs",
               newTarget: "$s11SpokesBikes14BikeJobServiceC6report2ofAA16SimulationReportVSgSS_tYaKFTE", newRecipient: "bikejobs"),
        // JobService.stationBikes -> BikeJobService
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC07stationB02ofSaySiGSgSS_tYaKFTE", oldRecipient: "jobs",
               newTarget: "$s11SpokesBikes14BikeJobServiceC07stationB02ofSaySiGSgSS_tYaKFTE", newRecipient: "bikejobs"),
        // JobService.submit -> BikeJobService
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC6submit_8listenerAA16SimulationReportVAA04BikeC0V_AA0C8ListenerCSgtYaKFTE", oldRecipient: "jobs",
               newTarget: "$s11SpokesBikes14BikeJobServiceC6submit_8listenerAA16SimulationReportVAA0cD0V_AA0D8ListenerCSgtYaKFTE", newRecipient: "bikejobs"),
        // TaskJobs.cancelHere
        Rename(oldTarget: "$s13SpokesCluster8TaskJobsC10cancelHere3job6reasonAA0C9JobReportVSgSS_SStYaKFTE", oldRecipient: nil,
               newTarget: "$s10SpokesJobs04TaskB0C10cancelHere3job6reasonAA0C9JobReportVSgSS_SStYaKFTE", newRecipient: nil),
        // TaskJobs.lookup
        Rename(oldTarget: "$s13SpokesCluster8TaskJobsC6lookupyAC6LookupOSSYaKFTE", oldRecipient: nil,
               newTarget: "$s10SpokesJobs04TaskB0C6lookupyAC6LookupOSSYaKFTE", newRecipient: nil),
        // TaskJobs.report
        Rename(oldTarget: "$s13SpokesCluster8TaskJobsC6report2ofAA0C9JobReportVSgSS_tYaKFTE", oldRecipient: nil,
               newTarget: "$s10SpokesJobs04TaskB0C6report2ofAA0C9JobReportVSgSS_tYaKFTE", newRecipient: nil),
        // TaskJobs.runBatch
        Rename(oldTarget: "$s13SpokesCluster8TaskJobsC8runBatch4kind5input5count8deadline7retriesAC0F6ReportVSS_SSSiSdSitYaKFTE", oldRecipient: nil,
               newTarget: "$s10SpokesJobs04TaskB0C8runBatch4kind5input5count8deadline7retriesAC0E6ReportVSS_SSSiSdSitYaKFTE", newRecipient: nil),
        // TaskJobs.runningJobs
        Rename(oldTarget: "$s13SpokesCluster8TaskJobsC07runningD0SayAC7RunningVGyYaKFTE", oldRecipient: nil,
               newTarget: "$s10SpokesJobs04TaskB0C07runningB0SayAC7RunningVGyYaKFTE", newRecipient: nil),
        // TaskJobs.submit
        Rename(oldTarget: "$s13SpokesCluster8TaskJobsC6submit_8listenerAA0C9JobReportVAA0cG4SpecV_AA0cG8ListenerCSgtYaKFTE", oldRecipient: nil,
               newTarget: "$s10SpokesJobs04TaskB0C6submit_8listenerAA0C9JobReportVAA0cF4SpecV_AA0cF8ListenerCSgtYaKFTE", newRecipient: nil),
        // TaskJobListener.accepted
        Rename(oldTarget: "$s13SpokesCluster15TaskJobListenerC8accepted3job11coordinator5nodesySS_SSSaySSGtYaKFTE", oldRecipient: nil,
               newTarget: "$s10SpokesJobs15TaskJobListenerC8accepted3job11coordinator5nodesySS_SSSaySSGtYaKFTE", newRecipient: nil),
        // TaskJobListener.ended
        Rename(oldTarget: "$s13SpokesCluster15TaskJobListenerC5endedyySayAA0D6RunnerV7OutcomeVGYaKFTE", oldRecipient: nil,
               newTarget: "$s10SpokesJobs15TaskJobListenerC5endedyySay0A7Cluster0D6RunnerV7OutcomeVGYaKFTE", newRecipient: nil),
    ])
}
