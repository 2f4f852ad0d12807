import Foundation

/// Unicode-aware string comparison for `COLLATE UNICODE`.
///
/// Placeholder implementation over Foundation; replaced by the ICU-backed collator.
enum UnicodeCollator {
    static func compare(_ a: String, _ b: String, collation: Collation) -> Int {
        var options: String.CompareOptions = []
        if collation.ignoreCase { options.insert(.caseInsensitive) }
        if collation.ignoreAccents { options.insert(.diacriticInsensitive) }
        let r = a.compare(b, options: options, range: nil, locale: Locale(identifier: collation.locale ?? "en_US_POSIX"))
        switch r {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }
}
