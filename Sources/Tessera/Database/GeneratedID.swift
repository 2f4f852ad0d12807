#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// IDs for documents saved without one (`MutableDocument()`, `tessera import` of lines with
/// no ID): `-` and 22 URL-safe characters, the shape of Couchbase Lite's, but ordered by
/// time. The first eight characters are the milliseconds since 1970 (48 bits), the other
/// fourteen 84 bits that start random in each new millisecond; an ID made in the same
/// millisecond as the one before it (or after the clock went back) is that ID plus one, so
/// within a process every ID sorts after the one made before it (across processes they sort
/// by time, to the millisecond). The characters are taken in ascending byte order, so IDs
/// compare as their numbers do.
///
/// Why: a collection's tables keyed by document ID are B-trees, and random IDs put each save
/// of a transaction on a different leaf page of each of them — a commit of 1,000 documents
/// copies and writes about a thousand pages of the document table alone. IDs made one after
/// another land on its last leaves. Importing tessera-bench's 100,000 hotels in batches of
/// 1,000 into three indexes took 7.4–7.5 s with random IDs and 3.5–3.6 s with ascending ones
/// (README, Performance → Writes).
package struct OrderedIDGenerator {
    /// The 64 characters, in ascending byte order.
    static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
    /// The suffix's bits.
    static let suffixMask: UInt128 = (1 << 84) - 1

    /// The millisecond and suffix of the last ID made.
    private(set) var millisecond: UInt64
    private(set) var suffix: UInt128
    private var random = SystemRandomNumberGenerator()

    package init() {
        millisecond = 0
        suffix = 0
    }

    /// A generator whose last ID was made at `millisecond` with `suffix` (tests).
    init(millisecond: UInt64, suffix: UInt128) {
        self.millisecond = millisecond
        self.suffix = suffix & Self.suffixMask
    }

    /// The next ID, made now.
    package mutating func next() -> String { next(at: Self.now()) }

    /// The next ID, made at `now` (milliseconds since 1970).
    mutating func next(at now: UInt64) -> String {
        if now > millisecond {
            millisecond = now
            suffix = randomSuffix()
        } else if suffix < Self.suffixMask {
            suffix += 1
        } else {
            // Every suffix of this millisecond is taken: run a millisecond ahead of the clock.
            millisecond += 1
            suffix = randomSuffix()
        }
        var out = [UInt8](repeating: 0, count: 23)
        out[0] = UInt8(ascii: "-")
        for i in 0..<8 { out[1 + i] = Self.alphabet[Int((millisecond >> UInt64(42 - 6 * i)) & 63)] }
        for i in 0..<14 { out[9 + i] = Self.alphabet[Int((suffix >> UInt128(78 - 6 * i)) & 63)] }
        return String(decoding: out, as: UTF8.self)
    }

    /// 84 random bits, the top one clear (room to count up within the millisecond).
    private mutating func randomSuffix() -> UInt128 {
        let high: UInt64 = random.next() & 0x7_FFFF
        let low: UInt64 = random.next()
        return UInt128(high) << 64 | UInt128(low)
    }

    /// Milliseconds since 1970 (48 bits last until the year 10889).
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return (UInt64(max(ts.tv_sec, 0)) &* 1000 &+ UInt64(max(ts.tv_nsec, 0)) / 1_000_000) & ((1 << 48) - 1)
    }

    /// The generator `MutableDocument` takes its IDs from.
    static let shared = Mutex(OrderedIDGenerator())
}
