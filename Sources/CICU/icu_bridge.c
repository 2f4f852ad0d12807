// Implementation of CICU.h over the system ICU's C API.
#include "CICU.h"
#include <time.h>

#include <unicode/ucol.h>
#include <unicode/uregex.h>
#include <unicode/ustring.h>
#include <unicode/unorm2.h>
#include <unicode/usearch.h>
#include <unicode/utypes.h>

// MARK: - Loading ICU when first needed
//
// On Linux the ICU libraries are opened on the first call that needs them, not when the
// process starts: loading and relocating them took about 0.8 ms of every start (`tessera`
// commands, test processes) though most never collate, fold case or match a regex. The
// headers rename each function with the library's version (`ucol_open` is `ucol_open_72`),
// so the names looked up are the ones this file was compiled against, as a link would be.

#define TESSERA_STR2(x) #x
#define TESSERA_STR(x) TESSERA_STR2(x)

// Every ICU function used here, and the library that holds it.
#define TESSERA_ICU_FUNCTIONS(X) \
    X(u_strFoldCase, uc) \
    X(u_strToLower, uc) \
    X(u_strToUpper, uc) \
    X(ucol_close, i18n) \
    X(ucol_open, i18n) \
    X(ucol_setAttribute, i18n) \
    X(ucol_setStrength, i18n) \
    X(ucol_strcollUTF8, i18n) \
    X(unorm2_getNFCInstance, uc) \
    X(unorm2_getNFDInstance, uc) \
    X(unorm2_normalize, uc) \
    X(uregex_clone, i18n) \
    X(uregex_close, i18n) \
    X(uregex_end, i18n) \
    X(uregex_find, i18n) \
    X(uregex_findNext, i18n) \
    X(uregex_groupCount, i18n) \
    X(uregex_groupNumberFromName, i18n) \
    X(uregex_matches, i18n) \
    X(uregex_open, i18n) \
    X(uregex_setMatchCallback, i18n) \
    X(uregex_setStackLimit, i18n) \
    X(uregex_setText, i18n) \
    X(uregex_setTimeLimit, i18n) \
    X(uregex_start, i18n) \
    X(usearch_close, i18n) \
    X(usearch_first, i18n) \
    X(usearch_openFromCollator, i18n)

#if defined(__linux__)
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static struct {
#define X(name, lib) __typeof__(name) *f_##name;
    TESSERA_ICU_FUNCTIONS(X)
#undef X
} icu;
static pthread_once_t icu_once = PTHREAD_ONCE_INIT;

/* Stops the process when ICU cannot be loaded, as the dynamic linker would have at start:
   carrying on without it would tokenize, fold and compare text differently. */
static void icu_missing(const char *what) {
    const char *reason = dlerror();
    fprintf(stderr, "tessera: cannot load ICU %s: %s\n", what, reason ? reason : "not found");
    abort();
}

static void icu_load(void) {
    void *uc = dlopen("libicuuc.so." TESSERA_STR(U_ICU_VERSION_MAJOR_NUM), RTLD_NOW | RTLD_LOCAL);
    if (uc == NULL) icu_missing("libicuuc.so." TESSERA_STR(U_ICU_VERSION_MAJOR_NUM));
    void *i18n = dlopen("libicui18n.so." TESSERA_STR(U_ICU_VERSION_MAJOR_NUM), RTLD_NOW | RTLD_LOCAL);
    if (i18n == NULL) icu_missing("libicui18n.so." TESSERA_STR(U_ICU_VERSION_MAJOR_NUM));
#define X(name, lib) \
    if ((icu.f_##name = (__typeof__(name) *)dlsym(lib, TESSERA_STR(name))) == NULL) icu_missing(TESSERA_STR(name));
    TESSERA_ICU_FUNCTIONS(X)
#undef X
}

/* Loads ICU on the first call (every entry point that calls ICU before it has handed out
   an ICU object calls this first). */
static inline void icu_require(void) { pthread_once(&icu_once, icu_load); }
#define ICU(name) (*icu.f_##name)
#else
static inline void icu_require(void) {}
#define ICU(name) name
#endif

// MARK: - Collation

void *tessera_collator_open(const char *locale, int ignoreCase, int ignoreAccents) {
    icu_require();
    UErrorCode status = U_ZERO_ERROR;
    UCollator *coll = ICU(ucol_open)(locale, &status);
    if (coll == NULL || U_FAILURE(status)) {
        if (coll) ICU(ucol_close)(coll);
        status = U_ZERO_ERROR;
        coll = ICU(ucol_open)("", &status);
        if (coll == NULL || U_FAILURE(status)) return NULL;
    }
    // Canonically equivalent strings (precomposed or not) compare equal.
    ICU(ucol_setAttribute)(coll, UCOL_NORMALIZATION_MODE, UCOL_ON, &status);
    if (!ignoreCase && !ignoreAccents) {
        ICU(ucol_setStrength)(coll, UCOL_TERTIARY);
    } else if (ignoreCase && !ignoreAccents) {
        ICU(ucol_setStrength)(coll, UCOL_SECONDARY);
    } else if (!ignoreCase && ignoreAccents) {
        // Base letters plus case, without accents.
        ICU(ucol_setStrength)(coll, UCOL_PRIMARY);
        ICU(ucol_setAttribute)(coll, UCOL_CASE_LEVEL, UCOL_ON, &status);
    } else {
        ICU(ucol_setStrength)(coll, UCOL_PRIMARY);
    }
    if (U_FAILURE(status)) {
        ICU(ucol_close)(coll);
        return NULL;
    }
    return coll;
}

void tessera_collator_close(void *collator) { ICU(ucol_close)((UCollator *)collator); }

int tessera_collator_compare_utf8(const void *collator, const char *a, int32_t aLength, const char *b,
                                  int32_t bLength) {
    UErrorCode status = U_ZERO_ERROR;
    UCollationResult r = ICU(ucol_strcollUTF8)((const UCollator *)collator, a, aLength, b, bLength, &status);
    return r == UCOL_LESS ? -1 : (r == UCOL_GREATER ? 1 : 0);
}

int tessera_collator_contains(void *collator, const uint16_t *text, int32_t textLength, const uint16_t *pattern,
                              int32_t patternLength) {
    if (patternLength == 0) return 1;
    if (textLength == 0) return 0;
    UErrorCode status = U_ZERO_ERROR;
    UStringSearch *search = ICU(usearch_openFromCollator)((const UChar *)pattern, patternLength, (const UChar *)text,
                                                     textLength, (const UCollator *)collator, NULL, &status);
    if (search == NULL || U_FAILURE(status)) {
        if (search) ICU(usearch_close)(search);
        return -1;
    }
    int32_t pos = ICU(usearch_first)(search, &status);
    ICU(usearch_close)(search);
    if (U_FAILURE(status)) return -1;
    return pos != USEARCH_DONE ? 1 : 0;
}

// MARK: - Case mapping

int32_t tessera_case_map(int upper, uint16_t *dest, int32_t capacity, const uint16_t *src, int32_t length) {
    icu_require();
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = upper ? ICU(u_strToUpper)((UChar *)dest, capacity, (const UChar *)src, length, "", &status)
                      : ICU(u_strToLower)((UChar *)dest, capacity, (const UChar *)src, length, "", &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) return n;
    if (U_FAILURE(status)) return -1;
    return n;
}

int32_t tessera_fold_case(uint16_t *dest, int32_t capacity, const uint16_t *src, int32_t length) {
    icu_require();
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = ICU(u_strFoldCase)((UChar *)dest, capacity, (const UChar *)src, length, U_FOLD_CASE_DEFAULT, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) return n;
    if (U_FAILURE(status)) return -1;
    return n;
}

int32_t tessera_normalize(int form, uint16_t *dest, int32_t capacity, const uint16_t *src, int32_t length) {
    icu_require();
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *norm = form == 0 ? ICU(unorm2_getNFCInstance)(&status) : ICU(unorm2_getNFDInstance)(&status);
    if (U_FAILURE(status) || norm == NULL) return -1;
    int32_t n = ICU(unorm2_normalize)(norm, (const UChar *)src, length, (UChar *)dest, capacity, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) return n;
    if (U_FAILURE(status)) return -1;
    return n;
}

// MARK: - Regular expressions

static const UChar kEmpty[1] = {0};

void *tessera_regex_open(const uint16_t *pattern, int32_t length) {
    icu_require();
    UErrorCode status = U_ZERO_ERROR;
    // ICU rejects a zero length; the empty pattern is passed NUL-terminated instead.
    URegularExpression *re = length == 0 ? ICU(uregex_open)(kEmpty, -1, 0, NULL, &status)
                                         : ICU(uregex_open)((const UChar *)pattern, length, 0, NULL, &status);
    if (re == NULL || U_FAILURE(status)) {
        if (re) ICU(uregex_close)(re);
        return NULL;
    }
    // Bound the backtracking stack (ICU's default, stated so it is not left to chance).
    ICU(uregex_setStackLimit)(re, TESSERA_REGEX_STACK_LIMIT, &status);
    return re;
}

void *tessera_regex_clone(void *regex) {
    UErrorCode status = U_ZERO_ERROR;
    URegularExpression *re = ICU(uregex_clone)((const URegularExpression *)regex, &status);
    if (re == NULL || U_FAILURE(status)) {
        if (re) ICU(uregex_close)(re);
        return NULL;
    }
    ICU(uregex_setStackLimit)(re, TESSERA_REGEX_STACK_LIMIT, &status);
    return re;
}

struct tessera_regex_guard {
    tessera_regex_check_fn check;
    const void *context;
    long long deadline;
    int timedOut;
};

static long long tessera_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Called by ICU once per match step while a match runs. */
static UBool tessera_regex_trampoline(const void *context, int32_t steps) {
    (void)steps;
    struct tessera_regex_guard *g = (struct tessera_regex_guard *)context;
    if (tessera_monotonic_ns() > g->deadline) {
        g->timedOut = 1;
        return 0;
    }
    return (g->check == NULL || g->check(g->context)) ? 1 : 0;
}

int tessera_regex_run(void *regex, int op, int32_t start, int32_t timeLimit, tessera_regex_check_fn check,
                      const void *context) {
    URegularExpression *re = (URegularExpression *)regex;
    UErrorCode status = U_ZERO_ERROR;
    struct tessera_regex_guard guard = {check, context, tessera_monotonic_ns() + TESSERA_REGEX_WALL_LIMIT_NS, 0};
    ICU(uregex_setTimeLimit)(re, timeLimit > 0 ? timeLimit : 0, &status);
    ICU(uregex_setMatchCallback)(re, tessera_regex_trampoline, &guard, &status);
    if (U_FAILURE(status)) return TESSERA_REGEX_ERROR;
    UBool r;
    switch (op) {
    case 0: r = ICU(uregex_matches)(re, 0, &status); break;
    case 1: r = ICU(uregex_find)(re, start, &status); break;
    default: r = ICU(uregex_findNext)(re, &status); break;
    }
    // The guard lives on this stack frame: never leave ICU pointing at it.
    UErrorCode reset = U_ZERO_ERROR;
    ICU(uregex_setMatchCallback)(re, NULL, NULL, &reset);
    switch (status) {
    case U_ZERO_ERROR: return r ? 1 : 0;
    case U_REGEX_TIME_OUT: return TESSERA_REGEX_TIME_OUT;
    case U_REGEX_STOPPED_BY_CALLER: return guard.timedOut ? TESSERA_REGEX_TIME_OUT : TESSERA_REGEX_STOPPED;
    case U_REGEX_STACK_OVERFLOW: return TESSERA_REGEX_STACK_OVERFLOW;
    default: return U_FAILURE(status) ? TESSERA_REGEX_ERROR : (r ? 1 : 0);
    }
}

void tessera_regex_close(void *regex) { ICU(uregex_close)((URegularExpression *)regex); }

int tessera_regex_set_text(void *regex, const uint16_t *text, int32_t length) {
    UErrorCode status = U_ZERO_ERROR;
    ICU(uregex_setText)((URegularExpression *)regex, length == 0 || text == NULL ? kEmpty : (const UChar *)text, length,
                   &status);
    return U_FAILURE(status) ? -1 : 0;
}

int tessera_regex_matches(void *regex) {
    UErrorCode status = U_ZERO_ERROR;
    UBool r = ICU(uregex_matches)((URegularExpression *)regex, 0, &status);
    return U_FAILURE(status) ? -1 : (r ? 1 : 0);
}

int tessera_regex_find(void *regex, int32_t start) {
    UErrorCode status = U_ZERO_ERROR;
    UBool r = ICU(uregex_find)((URegularExpression *)regex, start, &status);
    return U_FAILURE(status) ? -1 : (r ? 1 : 0);
}

int tessera_regex_find_next(void *regex) {
    UErrorCode status = U_ZERO_ERROR;
    UBool r = ICU(uregex_findNext)((URegularExpression *)regex, &status);
    return U_FAILURE(status) ? -1 : (r ? 1 : 0);
}

int32_t tessera_regex_group_count(void *regex) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = ICU(uregex_groupCount)((URegularExpression *)regex, &status);
    return U_FAILURE(status) ? -1 : n;
}

int32_t tessera_regex_start(void *regex, int32_t group) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = ICU(uregex_start)((URegularExpression *)regex, group, &status);
    return U_FAILURE(status) ? -1 : n;
}

int32_t tessera_regex_end(void *regex, int32_t group) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = ICU(uregex_end)((URegularExpression *)regex, group, &status);
    return U_FAILURE(status) ? -1 : n;
}

int32_t tessera_regex_group_number(void *regex, const uint16_t *name, int32_t length) {
    if (length == 0) return -1;
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = ICU(uregex_groupNumberFromName)((URegularExpression *)regex, (const UChar *)name, length, &status);
    return U_FAILURE(status) ? -1 : n;
}
