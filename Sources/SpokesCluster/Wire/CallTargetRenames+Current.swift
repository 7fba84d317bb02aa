extension CallTargetRenames {
    /// The functions protocol 5 renamed: the node's job desk (`jobs`) moved from the bike
    /// module to the job layer (module `SpokesJobs`), and its bike calls (submit, report,
    /// stations) to the bike desk (`bikejobs`). Printed by `Scripts/call-targets` from the
    /// symbols of release 0.3.0 and of this build.
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
        // JobService.networkAtStart -> BikeJobService (bikejobs)
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC14networkAtStart2ofAC07NetworkfG0VSgSS_tYaKFTE", oldRecipient: "jobs",
               newTarget: "$s11SpokesBikes14BikeJobServiceC14networkAtStart2ofAC07NetworkgH0VSgSS_tYaKFTE", newRecipient: "bikejobs"),
        // JobService.report -> BikeJobService (bikejobs)
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC6report2ofAA16SimulationReportVSgSS_tYaKFTE", oldRecipient: "jobs",
               newTarget: "$s11SpokesBikes14BikeJobServiceC6report2ofAA16SimulationReportVSgSS_tYaKFTE", newRecipient: "bikejobs"),
        // JobService.stationBikes -> BikeJobService (bikejobs)
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC07stationB02ofSaySiGSgSS_tYaKFTE", oldRecipient: "jobs",
               newTarget: "$s11SpokesBikes14BikeJobServiceC07stationB02ofSaySiGSgSS_tYaKFTE", newRecipient: "bikejobs"),
        // JobService.submit -> BikeJobService (bikejobs)
        Rename(oldTarget: "$s11SpokesBikes10JobServiceC6submit_8listenerAA16SimulationReportVAA04BikeC0V_AA0C8ListenerCSgtYaKFTE", oldRecipient: "jobs",
               newTarget: "$s11SpokesBikes14BikeJobServiceC6submit_8listenerAA16SimulationReportVAA0cD0V_AA0D8ListenerCSgtYaKFTE", newRecipient: "bikejobs"),
    ])
}
