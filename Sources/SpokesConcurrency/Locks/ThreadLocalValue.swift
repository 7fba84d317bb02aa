import Glibc

/// A value kept per thread, under the key `namespace.key`, optionally built on first use.
///
/// Useful as a lock-free cache of things that are costly to build and unsafe to share
/// (formatters, encoders): each thread builds and keeps its own.
///
/// ```swift
/// let encoder = ThreadLocalValue<JSONEncoder>(namespace: "Wire", key: "encoder") { _ in JSONEncoder() }
/// let mine = encoder.value()   // built on this thread's first call, then reused
/// ```
///
/// Stored in the thread's dictionary of such values (``ThreadValues``), so two
/// `ThreadLocalValue`s with the same `fullKey` share storage, and values live until their
/// thread ends.
public struct ThreadLocalValue<Value>: Sendable {
    /// Builds the value for a thread that has none; nil leaves it missing.
    public typealias Instantiator = @Sendable (ThreadLocalValue<Value>) -> Value?

    public let namespace: String?
    public let key: String
    private let instantiator: Instantiator?

    /// `namespace.key`, or just `key` without a namespace: the key in the thread dictionary.
    public var fullKey: String { namespace.map { "\($0).\(key)" } ?? key }

    public init(namespace: String? = nil, key: String, instantiator: Instantiator? = nil) {
        self.namespace = namespace
        self.key = key
        self.instantiator = instantiator
    }

    /// This thread's value, building and storing it with the instantiator when missing.
    public func value() -> Value? {
        if let cached = cachedValue() { return cached }
        guard let built = instantiator?(self) else { return nil }
        setValue(built)
        return built
    }

    /// This thread's value if it has one; never builds.
    public func cachedValue() -> Value? {
        ThreadValues.current.values[fullKey] as? Value
    }

    /// Sets (or with nil, removes) this thread's value.
    public func setValue(_ value: Value?) {
        ThreadValues.current.values[fullKey] = value.map { $0 as Any }
    }
}

/// One thread's values of every ``ThreadLocalValue``, under one `pthread` key: what
/// Foundation's `Thread.threadDictionary` was for, without linking Foundation. Only its
/// own thread ever reads or writes it; the key's destructor releases it as the thread ends.
private final class ThreadValues {
    var values: [String: Any] = [:]

    /// The key every thread keeps its `ThreadValues` under (made once, never deleted).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<ThreadValues>.fromOpaque(pointer).release() }
        }
        precondition(result == 0, "cannot make a thread-local key: \(String(cString: strerror(result)))")
        return key
    }()

    /// The calling thread's, made on its first use.
    static var current: ThreadValues {
        if let pointer = pthread_getspecific(key) { return Unmanaged<ThreadValues>.fromOpaque(pointer).takeUnretainedValue() }
        let made = ThreadValues()
        pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
        return made
    }
}
