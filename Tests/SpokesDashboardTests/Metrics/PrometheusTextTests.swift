import SpokesCluster
import Testing
@testable import SpokesDashboard

/// The Prometheus text format as ``PrometheusText`` writes it, and read back by a
/// checker of the format's rules (``ExpositionChecker``).
@Suite struct PrometheusTextTests {
    @Test func aFamilyIsItsHelpItsTypeThenOneLinePerSample() {
        let text = PrometheusText.render([
            MetricFamily("spokes_members", .gauge, help: "Members by state.",
                         samples: [.init("state", "alive", 3), .init("state", "dead", 0)]),
            MetricFamily("spokes_uptime_seconds", .gauge, help: "Uptime.", value: 12.5),
        ])
        #expect(text == """
            # HELP spokes_members Members by state.
            # TYPE spokes_members gauge
            spokes_members{state="alive"} 3
            spokes_members{state="dead"} 0
            # HELP spokes_uptime_seconds Uptime.
            # TYPE spokes_uptime_seconds gauge
            spokes_uptime_seconds 12.5

            """)
        #expect(ExpositionChecker(text).problems == [])
    }

    @Test func helpTextEscapesBackslashesAndLineFeedsAndNothingElse() {
        #expect(PrometheusText.escapeHelp(#"a\b"#) == #"a\\b"#)
        #expect(PrometheusText.escapeHelp("one\ntwo") == #"one\ntwo"#)
        #expect(PrometheusText.escapeHelp(#"say "hi""#) == #"say "hi""#)
        let text = PrometheusText.render([MetricFamily("x_total", .counter, help: "a \\ b\nc \"d\"", value: 1)])
        let checked = ExpositionChecker(text)
        #expect(checked.problems == [])
        #expect(checked.families["x_total"]?.help == "a \\ b\nc \"d\"")
    }

    @Test func labelValuesEscapeBackslashesQuotesAndLineFeedsAndReadBackTheSame() {
        let awkward = "C:\\path \"quoted\"\nnext line, {braces} = signs ü"
        #expect(PrometheusText.escapeLabelValue(awkward) == #"C:\\path \"quoted\"\nnext line, {braces} = signs ü"#)
        let text = PrometheusText.render([
            MetricFamily("spokes_node_info", .gauge, help: "Info.", samples: [.init([.init("node", awkward), .init("cluster", "")], 1)]),
        ])
        let checked = ExpositionChecker(text)
        #expect(checked.problems == [])
        #expect(checked.value("spokes_node_info", ["node": awkward, "cluster": ""]) == 1)
    }

    @Test func valuesAreWholeNumbersOrShortestDecimalsAndSpecialValuesAsPrometheusWritesThem() {
        #expect(PrometheusText.format(0) == "0")
        #expect(PrometheusText.format(-0.0) == "0")
        #expect(PrometheusText.format(42) == "42")
        #expect(PrometheusText.format(172_000_000) == "172000000")
        #expect(PrometheusText.format(0.1) == "0.1")
        #expect(PrometheusText.format(1e-5) == "1e-05")
        #expect(PrometheusText.format(1e300) == "1e+300")
        #expect(PrometheusText.format(.nan) == "NaN")
        #expect(PrometheusText.format(.infinity) == "+Inf")
        #expect(PrometheusText.format(-.infinity) == "-Inf")
        for value in [0.1, 1e-5, 1e300, 123.456, 9_007_199_254_740_993.0] {
            #expect(ExpositionChecker.parseValue(Substring(PrometheusText.format(value))) == value)
        }
    }

    @Test func namesOutsideTheFormatsCharactersAreMadeParseable() {
        #expect(PrometheusText.isValidName("spokes_a:b", allowColon: true))
        #expect(!PrometheusText.isValidName("spokes_a:b", allowColon: false))
        #expect(!PrometheusText.isValidName("1abc", allowColon: true))
        #expect(!PrometheusText.isValidName("", allowColon: true))
        let text = PrometheusText.render([MetricFamily("bad-name", .gauge, help: "h", samples: [.init("la-bel", "v", 1)])])
        #expect(text.contains("bad_name{la_bel=\"v\"} 1\n"))
        #expect(ExpositionChecker(text).problems == [])
    }

    @Test func aHistogramIsItsCumulativeBucketsThenInfinitySumAndCount() {
        let histogram = LatencyHistogram(bounds: [0.01, 0.1, 1])
        for seconds in [0.005, 0.05, 0.05, 5] { histogram.observe(seconds) }
        let text = PrometheusText.render([.histogram("spokes_raft_commit_seconds", help: "h", histogram.snapshot)])
        #expect(text == """
            # HELP spokes_raft_commit_seconds h
            # TYPE spokes_raft_commit_seconds histogram
            spokes_raft_commit_seconds_bucket{le="0.01"} 1
            spokes_raft_commit_seconds_bucket{le="0.1"} 3
            spokes_raft_commit_seconds_bucket{le="1"} 3
            spokes_raft_commit_seconds_bucket{le="+Inf"} 4
            spokes_raft_commit_seconds_sum 5.105
            spokes_raft_commit_seconds_count 4

            """)
        let checked = ExpositionChecker(text)
        #expect(checked.problems == [])
        #expect(checked.order == ["spokes_raft_commit_seconds"], "its samples belong to one family")
    }

    @Test func aFamilyWithoutSamplesStillSaysWhatItIs() {
        let text = PrometheusText.render([MetricFamily("spokes_raft_replicas", .gauge, help: "h", samples: [])])
        #expect(text == "# HELP spokes_raft_replicas h\n# TYPE spokes_raft_replicas gauge\n")
        #expect(ExpositionChecker(text).problems == [])
    }

    @Test func everyValueOfALabelGetsItsSeriesZerosIncluded() {
        let family = MetricFamily("spokes_members", .gauge, help: "h", label: "state", values: ["alive", "dead"], counts: ["alive": 2])
        #expect(family.samples == [.init("state", "alive", 2), .init("state", "dead", 0)])
    }

    /// The checker must refuse what the format forbids, or its passing says nothing.
    @Test func theCheckerRefusesWhatTheFormatForbids() {
        let broken: [(String, String)] = [
            ("no final line feed", "# TYPE a gauge\na 1"),
            ("a sample before its TYPE", "a 1\n# TYPE a gauge\n"),
            ("two TYPE lines", "# TYPE a gauge\n# TYPE a gauge\na 1\n"),
            ("two HELP lines", "# HELP a x\n# HELP a y\na 1\n"),
            ("an unknown type", "# TYPE a meter\na 1\n"),
            ("a family split in two", "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n"),
            ("the same series twice", "a{x=\"1\"} 1\na{x=\"1\"} 2\n"),
            ("an unquoted label value", "a{x=1} 1\n"),
            ("an unknown escape", "a{x=\"\\t\"} 1\n"),
            ("an unclosed label value", "a{x=\"1} 1\n"),
            ("a label named twice", "a{x=\"1\",x=\"2\"} 1\n"),
            ("a reserved label name", "a{__x=\"1\"} 1\n"),
            ("a bad metric name", "1a 1\n"),
            ("a value Prometheus cannot read", "a 0x10\n"),
            ("a missing value", "a\n"),
            ("an escape HELP does not allow", "# HELP a x\\\"y\na 1\n"),
            ("a negative counter", "# TYPE a_total counter\na_total -1\n"),
        ]
        for (what, text) in broken {
            #expect(!ExpositionChecker(text).problems.isEmpty, "\(what) passed the checker")
        }
        #expect(ExpositionChecker("# a comment\n# TYPE a gauge\na{x=\"1\",} 1 1700000000000\n\n").problems == [],
                "comments, a trailing comma, a timestamp and blank lines are allowed")
    }
}
