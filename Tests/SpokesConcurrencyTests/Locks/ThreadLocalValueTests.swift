import Foundation
import Synchronization
import Testing
@testable import SpokesConcurrency

@Suite struct ThreadLocalValueTests {
    @Test func fullKeyJoinsNamespaceAndKey() {
        #expect(ThreadLocalValue<Int>(namespace: "Logger", key: "formatter").fullKey == "Logger.formatter")
        #expect(ThreadLocalValue<Int>(key: "formatter").fullKey == "formatter")
    }

    @Test func valueBuildsOncePerThreadAndCachedValueNeverBuilds() {
        let builds = Atomic<Int>(0)
        let key = "value-\(UUID().uuidString)"
        let local = ThreadLocalValue<String>(namespace: "Tests", key: key) { _ in
            builds.add(1, ordering: .relaxed)
            return "built"
        }
        let finished = Threads.run(1, timeout: 10) { _ in
            #expect(local.cachedValue() == nil)
            #expect(builds.load(ordering: .relaxed) == 0, "cachedValue() never builds")
            #expect(local.value() == "built")
            #expect(local.value() == "built")
            #expect(local.cachedValue() == "built")
            #expect(builds.load(ordering: .relaxed) == 1, "built once, then cached")
        }
        #expect(finished)
    }

    @Test func twoThreadsNeverSeeEachOthersValue() {
        let local = ThreadLocalValue<Int>(namespace: "Tests", key: "isolated-\(UUID().uuidString)")
        let seen = Log<String>()
        let bothSet = DispatchGroup()
        bothSet.enter()
        bothSet.enter()
        let finished = Threads.run(2, timeout: 10) { index in
            local.setValue(index)
            bothSet.leave()
            _ = bothSet.wait(timeout: .now() + 5)
            seen.append("\(index)=\(local.cachedValue().map(String.init) ?? "nil")")
        }
        #expect(finished)
        #expect(Set(seen.values) == ["0=0", "1=1"])
    }

    @Test func namespacesKeepEqualKeysApart() {
        let key = "shared-\(UUID().uuidString)"
        let a = ThreadLocalValue<String>(namespace: "A", key: key)
        let b = ThreadLocalValue<String>(namespace: "B", key: key)
        let finished = Threads.run(1, timeout: 10) { _ in
            a.setValue("a")
            b.setValue("b")
            #expect(a.cachedValue() == "a")
            #expect(b.cachedValue() == "b")
            a.setValue(nil)
            #expect(a.cachedValue() == nil)
            #expect(b.cachedValue() == "b")
        }
        #expect(finished)
    }

    @Test func aNilInstantiatorResultLeavesTheValueMissing() {
        let local = ThreadLocalValue<Int>(key: "nil-\(UUID().uuidString)") { _ in nil }
        let finished = Threads.run(1, timeout: 10) { _ in
            #expect(local.value() == nil)
            #expect(local.cachedValue() == nil)
        }
        #expect(finished)
    }
}
