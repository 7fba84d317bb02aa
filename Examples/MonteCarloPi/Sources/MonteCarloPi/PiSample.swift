import SpokesCluster

/// `pi.sample`: of `samples` random points of the unit square, seeded by `seed`, how many
/// fall inside the quarter circle of radius 1. The fraction inside approaches pi / 4, so
/// summing many tasks' outputs estimates pi (``PiEstimate``).
///
/// A cpu kind (the default cost): it computes from start to end. The count runs in
/// `context.compute`, on a thread of its own, so the node's heartbeats never wait for it,
/// and stops when the task is cancelled.
public struct PiSample: TaskKind {
    public static let name = "pi.sample"

    /// How many samples one task may take: enough for about ten seconds of a release
    /// build's work on one core, and never zero.
    public static let samplesRange = 1...1_000_000_000

    public struct Input: Codable, Sendable, Hashable {
        /// How many points to draw.
        public var samples: Int
        /// The generator's seed: the same seed counts the same points everywhere.
        public var seed: Int

        public init(samples: Int, seed: Int) {
            self.samples = samples
            self.seed = seed
        }
    }

    public struct Output: Codable, Sendable, Hashable {
        /// The points drawn.
        public var samples: Int
        /// The points inside the quarter circle.
        public var inside: Int

        public init(samples: Int, inside: Int) {
            self.samples = samples
            self.inside = inside
        }
    }

    /// An input `pi.sample` refuses.
    public enum InputError: Error, CustomStringConvertible {
        case samplesOutOfRange(Int)

        public var description: String {
            switch self {
            case .samplesOutOfRange(let samples):
                "samples must be from \(PiSample.samplesRange.lowerBound) to \(PiSample.samplesRange.upperBound), got \(samples)"
            }
        }
    }

    public init() {}

    public func validate(_ input: Input) throws {
        guard Self.samplesRange.contains(input.samples) else { throw InputError.samplesOutOfRange(input.samples) }
    }

    public func run(_ input: Input, context: TaskContext) async throws -> Output {
        try await context.compute { isCancelled in try Self.count(input, isCancelled: isCancelled) }
    }

    /// The count itself, in this thread: checks `isCancelled` every 2^20 points and throws
    /// `CancellationError` once it is true.
    public static func count(_ input: Input, isCancelled: () -> Bool = { false }) throws -> Output {
        var generator = SplitMix64(seed: UInt64(bitPattern: Int64(input.seed)))
        var inside = 0
        var done = 0
        while done < input.samples {
            if isCancelled() { throw CancellationError() }
            let end = min(input.samples, done + 1 << 20)
            for _ in done..<end {
                let x = generator.nextUnit()
                let y = generator.nextUnit()
                if x * x + y * y <= 1 { inside += 1 }
            }
            done = end
        }
        return Output(samples: input.samples, inside: inside)
    }
}

/// Pi from `pi.sample` outputs: 4 x (points inside) / (points drawn).
public enum PiEstimate {
    public static func pi(from outputs: [PiSample.Output]) -> Double {
        let samples = outputs.reduce(0) { $0 + $1.samples }
        let inside = outputs.reduce(0) { $0 + $1.inside }
        return samples == 0 ? .nan : 4 * Double(inside) / Double(samples)
    }
}
