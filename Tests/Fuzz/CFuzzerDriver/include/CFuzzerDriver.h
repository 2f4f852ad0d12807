// libFuzzer's driver, for TesseraFuzz built with -sanitize=fuzzer (see Tests/FUZZING.md).
//
// SwiftPM gives executables an entry point of their own (it links `main` to
// `<module>_main`), so libFuzzer's `main` is never used: TesseraFuzz's `main` calls this
// driver itself. Declared here so that Swift calls it with the C calling convention; it
// is only referenced (and so only needed at link time) in the fuzzer build.
#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer with the command-line arguments, calling `callback` for each input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
