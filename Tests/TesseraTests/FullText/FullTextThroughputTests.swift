import Foundation
import Testing
@testable import Tessera

/// Tokenizer throughput on a synthetic corpus shaped like the index-build target (100 000
/// documents of 40–120 words). Opt-in, meant for a release build:
///
///     TESSERA_FT_BENCH=1 swift test -c release --filter FullTextThroughput
@Suite("Full-text: throughput", .enabled(if: ProcessInfo.processInfo.environment["TESSERA_FT_BENCH"] != nil))
struct FullTextThroughput {
    /// Zipf-distributed pseudo-English words, capitalisation and punctuation.
    static func corpus(documents: Int, seed: UInt64, syllables: [String]) -> [String] {
        var rng = SplitMix64(seed: seed)
        var vocabulary: [String] = []
        for _ in 0..<20_000 {
            var w = ""
            for _ in 0..<Int.random(in: 1...4, using: &rng) { w += syllables.randomElement(using: &rng)! }
            vocabulary.append(w)
        }
        vocabulary.insert(contentsOf: FullTextStopWords.english.prefix(40), at: 0)
        // Zipf(1): cumulative weights 1/k.
        var cumulative: [Double] = []
        var total = 0.0
        for k in 1...vocabulary.count {
            total += 1 / Double(k)
            cumulative.append(total)
        }
        func pick(_ rng: inout SplitMix64) -> String {
            let x = Double.random(in: 0..<total, using: &rng)
            var lo = 0
            var hi = cumulative.count - 1
            while lo < hi {
                let mid = (lo + hi) / 2
                if cumulative[mid] < x { lo = mid + 1 } else { hi = mid }
            }
            return vocabulary[lo]
        }
        let punctuation = [" ", " ", " ", " ", " ", ", ", ". ", "; ", " - ", "'s "]
        var docs: [String] = []
        docs.reserveCapacity(documents)
        for _ in 0..<documents {
            var text = ""
            for i in 0..<Int.random(in: 40...120, using: &rng) {
                if i > 0 { text += punctuation.randomElement(using: &rng)! }
                var w = pick(&rng)
                if Int.random(in: 0..<12, using: &rng) == 0 { w = w.prefix(1).uppercased() + w.dropFirst() }
                text += w
            }
            docs.append(text)
        }
        return docs
    }

    static func measure(_ label: String, _ docs: [String], bytes: Int, _ run: (String) -> Int) -> Duration {
        let clock = ContinuousClock()
        var checksum = 0
        let elapsed = clock.measure {
            for d in docs { checksum &+= run(d) }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let perDoc = seconds / Double(docs.count) * 1e6
        let mbps = Double(bytes) / seconds / 1e6
        print("[throughput] \(label): \(docs.count) docs in \(String(format: "%.3f", seconds)) s = "
              + "\(String(format: "%.2f", perDoc)) µs/doc, \(String(format: "%.0f", mbps)) MB/s (checksum \(checksum))")
        return elapsed
    }

    @Test func englishIndexBuildShape() {
        let docs = Self.corpus(documents: 100_000, seed: 1, syllables: [
            "ka", "ro", "ing", "ed", "tion", "al", "ness", "pre", "con", "ly", "er", "ment", "st", "ou", "ph", "able",
            "run", "data", "base", "link", "net", "sy", "ic", "ous",
        ])
        let bytes = docs.reduce(0) { $0 + $1.utf8.count }
        let words = docs.reduce(0) { $0 + $1.split(separator: " ").count }
        print("[throughput] corpus: \(docs.count) docs, \(bytes / 1_000_000) MB, ~\(words) words")
        let en = FullTextTokenizer(language: "en")
        let cold = Self.measure("index entries, en, cold caches", docs, bytes: bytes) { d in
            en.forEachIndexEntry(for: [.string(d)]) { term, value in _ = term.count &+ value.count }
        }
        _ = Self.measure("index entries, en, warm", docs, bytes: bytes) { d in
            en.forEachIndexEntry(for: [.string(d)]) { term, value in _ = term.count &+ value.count }
        }
        _ = Self.measure("tokens(in:) [FullTextToken], en", docs, bytes: bytes) { d in en.tokens(in: d).count }
        let plain = FullTextTokenizer(language: "", ignoreAccents: true)
        _ = Self.measure("index entries, no language + ignoreAccents", docs, bytes: bytes) { d in
            plain.forEachIndexEntry(for: [.string(d)]) { term, value in _ = term.count &+ value.count }
        }
        #expect(cold < .seconds(10))
    }

    @Test func nonASCIIText() {
        let ru = Self.corpus(documents: 20_000, seed: 2, syllables: [
            "ка", "ро", "ние", "ого", "ст", "ви", "ть", "ла", "ми", "ных", "пре", "ё", "Щ", "ы", "ю",
        ])
        let bytes = ru.reduce(0) { $0 + $1.utf8.count }
        let t = FullTextTokenizer(language: "ru")
        _ = Self.measure("index entries, ru (Cyrillic)", ru, bytes: bytes) { d in
            t.forEachIndexEntry(for: [.string(d)]) { term, value in _ = term.count &+ value.count }
        }
        let fr = Self.corpus(documents: 20_000, seed: 3, syllables: [
            "é", "è", "ça", "ou", "ment", "tion", "re", "la", "pré", "ê", "on", "in", "qu", "ai", "ë",
        ])
        let frBytes = fr.reduce(0) { $0 + $1.utf8.count }
        let tf = FullTextTokenizer(language: "fr", ignoreAccents: true)
        _ = Self.measure("index entries, fr + ignoreAccents (Latin-1 accents)", fr, bytes: frBytes) { d in
            tf.forEachIndexEntry(for: [.string(d)]) { term, value in _ = term.count &+ value.count }
        }
    }
}
