#ifndef TESSERA_CICU_H
#define TESSERA_CICU_H
// Tessera's narrow bridge to the system ICU (Debian libicu-dev): Unicode collation for
// COLLATE UNICODE (SPEC 5.7), collation-aware substring search (CONTAINS), full case mapping
// (LOWER/UPPER) and regular expressions (SPEC 6.6).
//
// This header deliberately uses plain C types only. Swift's Foundation on Linux bundles its
// own copy of ICU whose headers (module _FoundationICU) declare the same C types differently;
// a Swift module that saw both sets of declarations would not compile. Keeping ICU's headers
// inside icu_bridge.c means Tessera can import Foundation and CICU side by side. At link time
// the two never clash either: the system ICU's symbols carry a version suffix
// (ucol_open_72) and Foundation's copy a `swift_` prefix.
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Collation

/// Opens a collator for `locale` ("" = root; unknown locales fall back to root).
/// ignoreCase/ignoreAccents choose the strength (see UnicodeCollator.swift). NULL on failure.
void *tessera_collator_open(const char *locale, int ignoreCase, int ignoreAccents);
void tessera_collator_close(void *collator);
/// -1, 0 or 1 for two UTF-8 strings.
int tessera_collator_compare_utf8(const void *collator, const char *a, int32_t aLength, const char *b,
                                  int32_t bLength);
/// 1 if `pattern` occurs in `text` under the collator, 0 if not, -1 on error (UTF-16 input).
int tessera_collator_contains(void *collator, const uint16_t *text, int32_t textLength, const uint16_t *pattern,
                              int32_t patternLength);

// MARK: - Case mapping

/// Full case mapping in the root locale (UTF-16). Returns the needed length; if it exceeds
/// `capacity` nothing useful was written and the call must be repeated with more room.
/// Negative on error.
int32_t tessera_case_map(int upper, uint16_t *dest, int32_t capacity, const uint16_t *src, int32_t length);

/// Full case folding (default mappings), same length convention as tessera_case_map.
int32_t tessera_fold_case(uint16_t *dest, int32_t capacity, const uint16_t *src, int32_t length);

// MARK: - Normalization

/// Canonical composition (form 0, NFC) or decomposition (form 1, NFD), same length convention
/// as tessera_case_map.
int32_t tessera_normalize(int form, uint16_t *dest, int32_t capacity, const uint16_t *src, int32_t length);

// MARK: - Regular expressions

/// Compiles a pattern (UTF-16, case-sensitive). NULL when invalid.
void *tessera_regex_open(const uint16_t *pattern, int32_t length);
void tessera_regex_close(void *regex);
/// Binds UTF-16 text (kept by reference until the next call). 0 on success.
int tessera_regex_set_text(void *regex, const uint16_t *text, int32_t length);
/// 1 if the whole text matches, 0 if not, -1 on error.
int tessera_regex_matches(void *regex);
/// 1 if a match is found from `start` (UTF-16 index), 0 if not, -1 on error.
int tessera_regex_find(void *regex, int32_t start);
/// 1 if another match follows the previous one, 0 if not, -1 on error.
int tessera_regex_find_next(void *regex);
/// Number of capture groups, -1 on error.
int32_t tessera_regex_group_count(void *regex);
/// UTF-16 start / end of a group of the current match; -1 if the group did not take part.
int32_t tessera_regex_start(void *regex, int32_t group);
int32_t tessera_regex_end(void *regex, int32_t group);
/// The backtracking stack an ICU regex may use (bytes).
#define TESSERA_REGEX_STACK_LIMIT (8 * 1024 * 1024)
/// The longest one match may run, in nanoseconds of wall-clock time (besides ICU's step
/// limit, whose steps take longer on a slow or busy machine): then TESSERA_REGEX_TIME_OUT.
#define TESSERA_REGEX_WALL_LIMIT_NS 250000000LL
/// Results of tessera_regex_run besides 1 (match) and 0 (no match).
#define TESSERA_REGEX_ERROR (-1)
#define TESSERA_REGEX_TIME_OUT (-2)
#define TESSERA_REGEX_STOPPED (-3)
#define TESSERA_REGEX_STACK_OVERFLOW (-4)

/// A copy of a compiled regex (same pattern, own match state), NULL on failure.
void *tessera_regex_clone(void *regex);
/// Called about every ten thousand steps of a match: nonzero to go on, 0 to stop it.
typedef int (*tessera_regex_check_fn)(const void *context);
/// Runs a match on the bound text with a time limit (ICU steps, roughly 0.1 to 0.3 ms each;
/// 0: none) and an optional check: op 0 matches the whole text, 1 finds from `start`, 2 finds
/// the next match. Returns 1, 0, or a TESSERA_REGEX_ error.
int tessera_regex_run(void *regex, int op, int32_t start, int32_t timeLimit, tessera_regex_check_fn check,
                      const void *context);
/// Number of a named group, or -1.
int32_t tessera_regex_group_number(void *regex, const uint16_t *name, int32_t length);

#ifdef __cplusplus
}
#endif
#endif
