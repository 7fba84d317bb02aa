import Testing
@testable import SpokesCluster

@Suite struct JobIdentifierTests {
    @Test func idsHaveEightHexDigitsZeroPadded() {
        #expect(JobIdentifier.make("job", number: 0x78eb671) == "job-078eb671")
        #expect(JobIdentifier.make("batch", number: 0) == "batch-00000000")
        #expect(JobIdentifier.make("job", number: .max) == "job-ffffffff")
        for _ in 0..<100 {
            let id = JobIdentifier.make("job")
            #expect(id.count == 12 && id.dropFirst(4).allSatisfy(\.isHexDigit), "\(id)")
        }
    }
}
