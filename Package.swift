// swift-tools-version:6.0
//
// Tessera — an embedded JSON document database for Swift on LMDB.
//
// No outside Swift packages: C libraries come from Debian packages and are
// declared as system-library targets with apt hints.

import PackageDescription

let package = Package(
    name: "Tessera",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Tessera", targets: ["Tessera"]),
        // The fixture runner (`ConformanceRunner`) for test suites; `tessera conformance` uses it too.
        .library(name: "TesseraConformance", targets: ["TesseraConformance"]),
        .executable(name: "tessera", targets: ["tessera"]),
        .executable(name: "tessera-bench", targets: ["tessera-bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"])]
        ),
        // SQLite (apt libsqlite3-dev), used only by tessera-bench as the reference engine.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CStemmer",
            providers: [.apt(["libstemmer-dev"])]
        ),
        // ICU (apt libicu-dev) behind a small C bridge whose header has no ICU types, so that
        // it never meets the ICU copy bundled with Foundation (see Sources/CICU/include/CICU.h).
        // On Linux the bridge opens the ICU libraries the first time it needs them (dlopen), so
        // a process that never collates, folds case or matches a regex does not load them.
        .target(
            name: "CICU",
            linkerSettings: [
                .linkedLibrary("dl", .when(platforms: [.linux])),
                .linkedLibrary("icui18n", .when(platforms: [.macOS])),
                .linkedLibrary("icuuc", .when(platforms: [.macOS])),
                .linkedLibrary("icudata", .when(platforms: [.macOS])),
            ]
        ),
        // LMDB calls that return an error instead of dying when a damaged page makes LMDB
        // fault (SIGSEGV, SIGBUS) or fail an assertion (Sources/CLMDBGuard/include/CLMDBGuard.h).
        .target(name: "CLMDBGuard", dependencies: ["CLMDB"]),
        // POSIX calls the Glibc module leaves out (naming a thread).
        .target(name: "CSupport"),
        // An engine internal (its API is `package`): not a product.
        .target(name: "LMDB", dependencies: ["CLMDB", "CLMDBGuard"]),
        .target(name: "Tessera", dependencies: ["LMDB", "CStemmer", "CICU", "CSupport"]),
        // Runs conformance fixtures (../shared/conformance/FORMAT.md) on temporary databases.
        .target(name: "TesseraConformance", dependencies: ["Tessera"]),
        .executableTarget(name: "tessera", dependencies: ["Tessera", "TesseraConformance"]),
        // Side-by-side benchmarks against SQLite configured the way Couchbase Lite uses it.
        .executableTarget(name: "tessera-bench", dependencies: ["Tessera", "CSQLite"]),
        .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
        // A child process for crash tests: writes batches until killed with SIGKILL.
        .executableTarget(name: "TesseraCrashWriter", dependencies: ["Tessera"], path: "Tests/CrashWriter"),
        // A second process writing to the same database (multi-process tests).
        .executableTarget(name: "TesseraProcessWriter", dependencies: ["Tessera"], path: "Tests/ProcessWriter"),
        // libFuzzer entry point (Tests/FUZZING.md); an ordinary build replays saved inputs.
        .target(name: "CFuzzerDriver", path: "Tests/Fuzz/CFuzzerDriver"),
        .executableTarget(name: "TesseraFuzz", dependencies: ["Tessera", "TesseraConformance", "CFuzzerDriver"], path: "Tests/Fuzz/TesseraFuzz"),
        // Reliability/Format3Database … Format9Database: databases the format-3 … -9 code
        // wrote (migration tests open copies).
        .testTarget(name: "TesseraTests", dependencies: ["Tessera", "TesseraConformance", "LMDB", "TesseraCrashWriter", "TesseraProcessWriter"],
                    exclude: ["Reliability/Format3Database", "Reliability/Format4Database", "Reliability/Format5Database",
                              "Reliability/Format6Database", "Reliability/Format7Database",
                              "Reliability/Format8Database", "Reliability/Format9Database"]),
        .testTarget(name: "ConformanceTests", dependencies: ["TesseraConformance"]),
    ]
)
