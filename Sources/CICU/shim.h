#ifndef TESSERA_CICU_SHIM_H
#define TESSERA_CICU_SHIM_H
// The system ICU (Debian libicu-dev), used for Unicode collation (COLLATE UNICODE, SPEC 5.7),
// collation-aware substring search (CONTAINS) and regular expressions (SPEC 6.6).
//
// ICU renames every C entry point with its version (ucol_open -> ucol_open_72), so Swift would
// see version-specific names. These static inline wrappers give Swift stable names that compile
// against whichever ICU version is installed. The system ICU's symbols carry the version suffix
// and Foundation's bundled copy uses a `swift_` prefix, so the two never clash at link time.
#include <unicode/utypes.h>
#include <unicode/ucol.h>
#include <unicode/usearch.h>
#include <unicode/uregex.h>
#include <unicode/uloc.h>
#include <unicode/ustring.h>
#include <unicode/unorm2.h>

// MARK: - Collation

static inline UCollator *tessera_ucol_open(const char *locale, UErrorCode *status) {
    return ucol_open(locale, status);
}
static inline void tessera_ucol_close(UCollator *coll) { ucol_close(coll); }
static inline void tessera_ucol_setStrength(UCollator *coll, UCollationStrength strength) {
    ucol_setStrength(coll, strength);
}
static inline void tessera_ucol_setAttribute(UCollator *coll, UColAttribute attr, UColAttributeValue value,
                                             UErrorCode *status) {
    ucol_setAttribute(coll, attr, value, status);
}
static inline UCollationResult tessera_ucol_strcollUTF8(const UCollator *coll, const char *a, int32_t aLength,
                                                        const char *b, int32_t bLength, UErrorCode *status) {
    return ucol_strcollUTF8(coll, a, aLength, b, bLength, status);
}
static inline UCollationResult tessera_ucol_strcoll(const UCollator *coll, const UChar *a, int32_t aLength,
                                                    const UChar *b, int32_t bLength) {
    return ucol_strcoll(coll, a, aLength, b, bLength);
}

// MARK: - Case mapping

static inline int32_t tessera_u_strToLower(UChar *dest, int32_t destCapacity, const UChar *src, int32_t srcLength,
                                           const char *locale, UErrorCode *status) {
    return u_strToLower(dest, destCapacity, src, srcLength, locale, status);
}
static inline int32_t tessera_u_strToUpper(UChar *dest, int32_t destCapacity, const UChar *src, int32_t srcLength,
                                           const char *locale, UErrorCode *status) {
    return u_strToUpper(dest, destCapacity, src, srcLength, locale, status);
}

// MARK: - Collation-aware search

static inline UStringSearch *tessera_usearch_openFromCollator(const UChar *pattern, int32_t patternLength,
                                                              const UChar *text, int32_t textLength,
                                                              const UCollator *coll, UErrorCode *status) {
    return usearch_openFromCollator(pattern, patternLength, text, textLength, coll, NULL, status);
}
static inline int32_t tessera_usearch_first(UStringSearch *search, UErrorCode *status) {
    return usearch_first(search, status);
}
static inline void tessera_usearch_close(UStringSearch *search) { usearch_close(search); }

// MARK: - Regular expressions

static inline URegularExpression *tessera_uregex_open(const UChar *pattern, int32_t patternLength, uint32_t flags,
                                                      UErrorCode *status) {
    return uregex_open(pattern, patternLength, flags, NULL, status);
}
static inline void tessera_uregex_close(URegularExpression *re) { uregex_close(re); }
static inline void tessera_uregex_setText(URegularExpression *re, const UChar *text, int32_t textLength,
                                          UErrorCode *status) {
    uregex_setText(re, text, textLength, status);
}
static inline UBool tessera_uregex_matches(URegularExpression *re, int32_t startIndex, UErrorCode *status) {
    return uregex_matches(re, startIndex, status);
}
static inline UBool tessera_uregex_find(URegularExpression *re, int32_t startIndex, UErrorCode *status) {
    return uregex_find(re, startIndex, status);
}
static inline UBool tessera_uregex_findNext(URegularExpression *re, UErrorCode *status) {
    return uregex_findNext(re, status);
}
static inline int32_t tessera_uregex_groupCount(URegularExpression *re, UErrorCode *status) {
    return uregex_groupCount(re, status);
}
static inline int32_t tessera_uregex_start(URegularExpression *re, int32_t group, UErrorCode *status) {
    return uregex_start(re, group, status);
}
static inline int32_t tessera_uregex_end(URegularExpression *re, int32_t group, UErrorCode *status) {
    return uregex_end(re, group, status);
}
static inline int32_t tessera_uregex_groupNumberFromName(URegularExpression *re, const UChar *name,
                                                         int32_t nameLength, UErrorCode *status) {
    return uregex_groupNumberFromName(re, name, nameLength, status);
}
static inline void tessera_uregex_reset(URegularExpression *re, int32_t index, UErrorCode *status) {
    uregex_reset(re, index, status);
}

// MARK: - Normalization and case folding (full-text tokenizer)

static inline const UNormalizer2 *tessera_unorm2_getNFCInstance(UErrorCode *status) {
    return unorm2_getNFCInstance(status);
}
static inline const UNormalizer2 *tessera_unorm2_getNFDInstance(UErrorCode *status) {
    return unorm2_getNFDInstance(status);
}
static inline int32_t tessera_unorm2_normalize(const UNormalizer2 *norm, const UChar *src, int32_t length, UChar *dest,
                                               int32_t capacity, UErrorCode *status) {
    return unorm2_normalize(norm, src, length, dest, capacity, status);
}
static inline int32_t tessera_u_strFoldCase(UChar *dest, int32_t destCapacity, const UChar *src, int32_t srcLength,
                                            uint32_t options, UErrorCode *status) {
    return u_strFoldCase(dest, destCapacity, src, srcLength, options, status);
}

#endif
