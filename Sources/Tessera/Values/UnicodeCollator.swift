import CICU

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Unicode Collation Algorithm comparisons for `COLLATE UNICODE` (SPEC §5.7), backed by the
/// system ICU (`libicu`, CLDR tailorings per locale).
///
/// A collation maps to one ICU collator: the locale (root when nil) plus a strength:
///
/// | NOCASE | NODIAC | ICU settings |
/// |---|---|---|
/// | no | no | tertiary (case and accents significant) |
/// | yes | no | secondary (accents significant) |
/// | no | yes | primary + case level (case significant, accents not) |
/// | yes | yes | primary (base letters only) |
///
/// Canonical equivalents always compare equal (normalization mode on), so a precomposed `é`
/// equals `e` + U+0301.
///
/// The strength settings live in `Sources/CICU/icu_bridge.c`.
///
/// ICU's documentation does not promise that one collator may be used from several threads at
/// once, so every thread keeps its own collators (opened on first use, closed when the thread
/// ends). Opening costs tens of microseconds; comparing costs well under a microsecond.
enum UnicodeCollator {
    /// Three-way comparison of two strings under a Unicode collation (<0, 0, >0).
    static func compare(_ a: String, _ b: String, collation: Collation) -> Int {
        if stringsEqualBinary(a, b) { return 0 }
        let coll = CollatorThreadCache.current.collator(for: collation)
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in
                pa.withMemoryRebound(to: CChar.self) { ca in
                    pb.withMemoryRebound(to: CChar.self) { cb in
                        Int(tessera_collator_compare_utf8(coll, ca.baseAddress, Int32(ca.count), cb.baseAddress, Int32(cb.count)))
                    }
                }
            }
        }
    }

    /// True when `text` contains a substring that is equal to `pattern` under the collation
    /// (ICU collation-aware string search). An empty pattern is found in every string.
    static func contains(_ text: String, _ pattern: String, collation: Collation) -> Bool {
        if pattern.isEmpty { return true }
        if text.isEmpty { return false }
        // A byte-exact occurrence is a match under every collation.
        if text.utf8.count >= pattern.utf8.count, binaryContains(text, pattern) { return true }
        let coll = CollatorThreadCache.current.collator(for: collation)
        let t = Array(text.utf16), p = Array(pattern.utf16)
        return t.withUnsafeBufferPointer { tb in
            p.withUnsafeBufferPointer { pb in
                tessera_collator_contains(coll, tb.baseAddress, Int32(tb.count), pb.baseAddress, Int32(pb.count)) == 1
            }
        }
    }
}

/// Byte-wise substring test (UTF-8 byte order = code point order, so a byte match is a
/// code point match).
func binaryContains(_ text: String, _ pattern: String) -> Bool {
    if pattern.isEmpty { return true }
    var text = text, pattern = pattern
    return text.withUTF8 { t in
        pattern.withUTF8 { p in
            let n = t.count, m = p.count
            if m > n { return false }
            let first = p[0]
            var i = 0
            while i <= n - m {
                if t[i] == first {
                    var j = 1
                    while j < m && t[i + j] == p[j] { j &+= 1 }
                    if j == m { return true }
                }
                i &+= 1
            }
            return false
        }
    }
}

// MARK: - Per-thread collators

/// What identifies an ICU collator configuration.
private struct CollatorKey: Hashable {
    var locale: String
    var ignoreCase: Bool
    var ignoreAccents: Bool

    init(_ c: Collation) {
        locale = c.locale ?? ""
        ignoreCase = c.ignoreCase
        ignoreAccents = c.ignoreAccents
    }
}

/// The pthread key under which each thread keeps its `CollatorThreadCache`; the destructor
/// releases the cache (closing its collators) when the thread exits.
private let collatorCacheKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key) { raw in
        guard let raw else { return }
        Unmanaged<CollatorThreadCache>.fromOpaque(raw).release()
    }
    precondition(rc == 0, "pthread_key_create failed for the collator cache")
    return key
}()

/// One thread's open ICU collators. Never shared: only the owning thread reaches it, through
/// thread-specific storage.
private final class CollatorThreadCache {
    private var collators: [CollatorKey: UnsafeMutableRawPointer] = [:]
    private var lastKey: CollatorKey?
    private var lastCollator: UnsafeMutableRawPointer?

    /// The calling thread's cache, created on first use.
    static var current: CollatorThreadCache {
        if let raw = pthread_getspecific(collatorCacheKey) {
            return Unmanaged<CollatorThreadCache>.fromOpaque(raw).takeUnretainedValue()
        }
        let cache = CollatorThreadCache()
        pthread_setspecific(collatorCacheKey, Unmanaged.passRetained(cache).toOpaque())
        return cache
    }

    /// The collator for `collation`, opened and configured on first use.
    func collator(for collation: Collation) -> UnsafeMutableRawPointer {
        let key = CollatorKey(collation)
        if let lastCollator, lastKey == key { return lastCollator }
        let coll = collators[key] ?? open(key)
        lastKey = key
        lastCollator = coll
        return coll
    }

    @inline(never)
    private func open(_ key: CollatorKey) -> UnsafeMutableRawPointer {
        guard let coll = tessera_collator_open(key.locale, key.ignoreCase ? 1 : 0, key.ignoreAccents ? 1 : 0) else {
            fatalError("ICU could not open a collator for locale '\(key.locale)'")
        }
        collators[key] = coll
        return coll
    }

    deinit {
        for (_, c) in collators { tessera_collator_close(c) }
    }
}
