import Glibc
import Testing
@testable import SpokesConcurrency

/// A thread of its own, named for `top -H`, without Foundation's `Thread`.
struct PlainThreadTests {
    @Test func runsTheBodyOnANewThreadNamedAsAsked() async {
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<(String, Bool), Never>) in
            let caller = pthread_self()
            PlainThread.start(name: "test.plain") {
                continuation.resume(returning: (PlainThread.currentName, pthread_equal(pthread_self(), caller) == 0))
            }
        }
        #expect(seen.0 == "test.plain")
        #expect(seen.1, "the body ran on the caller's thread")
    }

    @Test func aLongNameIsCutToFifteenBytesBetweenCharacters() async {
        let names = await withCheckedContinuation { (continuation: CheckedContinuation<[String], Never>) in
            PlainThread.start(name: "spokes.connection.write") {
                let first = PlainThread.currentName
                PlainThread.nameCurrent("spokes.écrivain.x")   // é is two bytes: 14 fit, é would end at 16
                continuation.resume(returning: [first, PlainThread.currentName])
            }
        }
        #expect(names == ["spokes.connecti", "spokes.écrivai"])
    }
}
