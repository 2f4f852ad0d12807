// swift-tools-version:6.0
//
// An app that depends on Tessera the way a user's package would (by path here), built in CI
// (`.ci/run`). It compiles against the public API only: Swift 6 language mode, so strict
// concurrency, and warnings are errors. Not part of the Tessera package (`swift build` at the
// root ignores this folder).

import PackageDescription

// A path dependency's package identity is the last component of its directory, which depends on
// where the repository is cloned.
let root = Context.packageDirectory.split(separator: "/").dropLast(2).last.map(String.init) ?? "tessera"

let package = Package(
    name: "TesseraApp",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "TesseraApp",
            dependencies: [.product(name: "Tessera", package: root.lowercased())],
            swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]
        ),
    ]
)
