import SpokesConcurrency
import Testing
@testable import SpokesCluster

@Suite struct FailureReasonTests {
    struct Opaque: Error {}

    @Test func everyReasonReadsAsWordsNeverAsATypeDump() {
        #expect(FailureReason.describe(CancellationError(), deadline: 30) == "cancelled")
        #expect(FailureReason.describe(TimeoutError(seconds: 0.5), deadline: 0.5) == "no result within the 0.5 s deadline")
        #expect(FailureReason.describe(TimeoutError(seconds: 30), deadline: 30) == "no result within the 30 s deadline")
        #expect(FailureReason.describe(TaskError.injectedFailure(node: "j1", task: 4), deadline: 30)
                == "injected failure on j1 (every Nth task fails), task 4")
        #expect(FailureReason.describe(RemoteCallError.remoteError(type: "CancellationError", message: "CancellationError()", node: "j1"), deadline: 30)
                == "cancelled on j1")
        #expect(FailureReason.describe(RemoteCallError.remoteError(type: "TaskError", message: "injected failure on j1 (every Nth task fails), task 4", node: "j1"), deadline: 30)
                == "injected failure on j1 (every Nth task fails), task 4")
        #expect(FailureReason.describe(RemoteCallError.remoteError(type: "DecodingError", message: "DecodingError.dataCorrupted(Context(codingPath: []))", node: "j1"), deadline: 30)
                == "j1 failed with DecodingError")
        #expect(FailureReason.describe(RemoteCallError.peerDisconnected(node: "j2", reason: "connection closed"), deadline: 30)
                == "peer disconnected: j2 (connection closed)")
        #expect(FailureReason.describe(Opaque(), deadline: 30) == "failed with Opaque")
    }
}
