/*
 * simt-rewrite: turns a .cu file into C++ that the host compiler accepts,
 * for the SIMT emulator. simtcc runs it before g++; students never call it.
 *
 * It makes exactly three rewrites; everything else is copied byte for byte,
 * and line breaks are kept so that compiler messages and gdb point at the
 * student's own lines (a #line directive names the original file):
 *   name<<<grid, block, shmem, stream>>>(args)
 *       -> ::simt::launch(::simt::LaunchConfig(grid, block, shmem, stream), name)(args)
 *   extern __shared__ T name[];
 *       -> T *const name = (T *)simt_dynamic_shared();            inside a function
 *       -> static const ::simt::DynShared<T> name;                  at namespace scope
 *   asm volatile("ptx instruction" : outputs : inputs)
 *       -> do { ... ::simt::ptx::instruction(...); ... } while (0)  (see "inline PTX")
 * (a kernel template launched with its template arguments left to deduce
 * goes through a generic lambda, and a declaration after the kernel
 * deduces them: deduction_helper), and it adds calls on the same line:
 * after each static __shared__
 * declaration (simt_shared_first_use), and at the start of the body of a
 * kernel with __launch_bounds__ (simt_check_launch_bounds; not where the
 * bound comes from a macro, which the rewrite does not follow).
 * Comments, string and character literals are skipped. It is a scanner, not
 * a parser: a launch must name its kernel with an identifier, a qualified
 * name or a template-id (kernel<128>), which covers the course's code.
 * Before rewriting, it checks the calls between the file's host, __device__
 * and __global__ functions as nvcc does (see "execution spaces" below), and
 * stops with nvcc's error where nvcc would.
 *
 * With --headers, the headers the file includes with "..." are rewritten
 * too, into copies (see "the file's own headers" at the end).
 *
 * Usage: simt-rewrite [--headers DIR [--emulator-include DIR] [-iquote DIR]... [-I DIR]...] input.cu output.cpp
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char *s;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s) {
            perror("simt-rewrite");
            exit(2);
        }
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* Room for one more of n elements of the given size in *p (capacity *cap). */
static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return p;
    *cap = *cap ? *cap * 2 : 256;
    p = realloc(p, *cap * size);
    if (!p) {
        perror("simt-rewrite");
        exit(2);
    }
    return p;
}

static const char *src; /* the file, with a NUL after its len bytes */
static size_t len;
static const char *path;

/* --- what the rewrite of a file finds ----------------------------------------
 * All of it is in st, which rewrite_reset clears before each file: the
 * fuzzing harness rewrites many in one process. Anyone adding state adds
 * it to st (not as a static of its own, which a reset would miss), and
 * frees what it allocates in rewrite_reset. */

/* A preprocessor line: from its '#' to the line break that ends it. */
typedef struct {
    size_t start, end;
} span;

/* T_UNPAIRED: a brace of a later #elif/#else branch that pairs with none
 * in its own branch (see unpair_braces); it is no bracket to the scans. */
enum { T_IDENT, T_PUNCT, T_STR, T_NUM, T_UNPAIRED };

typedef struct {
    int type;
    size_t pos, n;
    int arch; /* inside #if ... __CUDA_ARCH__ or __SIMT_EMULATOR__ */
} token;

typedef struct {
    size_t start;      /* token index of the declaration's first token */
    size_t name;       /* token index of the name */
    int space;         /* one SP_* */
    size_t open, close; /* the body's braces, or 0 for a declaration */
    int templ;         /* a template: nvcc checks its calls per instantiation */
    int cexpr;         /* constexpr: still a host function unless marked */
    size_t end;        /* its last token: the body's '}' or the declaration's ';' */
} fn_rec;

typedef struct {
    size_t pos;
    char *text; /* malloc'd */
    size_t seq; /* the order it was added in, which breaks ties of pos */
} insertion;

static struct {
    /* The file's preprocessor lines, in order, found once by
     * find_directives. The scans below all take a '#' for a directive's
     * start exactly where one of these starts. */
    span *dirs;
    size_t ndirs, dirs_cap;
    /* Scope tracking: is the innermost enclosing brace a function body
     * (or a block within one), or namespace-like (namespace, extern "C")? */
    char scopes[4096];
    int nscopes;
    token *toks;
    size_t ntoks, toks_cap;
    /* Names of macros this file defines, and whether each one's body
     * names an execution space (#define HD __host__ __device__). */
    struct {
        size_t pos, n;
        int spaces;
    } macros[256];
    int nmacros;
    fn_rec *fns;
    size_t nfns, fns_cap;
    char *unpaired; /* one byte per byte of src: 1 at a brace unpair_braces leaves out */
    /* For each open conditional (as arch_stack): is the text in a later
     * branch, and the token its branch starts at. */
    struct {
        int later;
        size_t start;
    } branches[32];
    int decl_errors; /* errors found while scanning declarations */
    /* Variables at namespace scope that live on the GPU (__device__,
     * __constant__; not __managed__, which host code may use): token index
     * of each name, and the word. */
    struct {
        size_t name;
        const char *space;
    } gpu_vars[256];
    int ngpu_vars;
    /* Where the rewrite adds SIMT_HOST_CODE_BEGIN (before a host
     * function's definition) and SIMT_HOST_CODE_END (after its closing
     * brace), in source order; see cuda_runtime.h. Functions with a part
     * under #if on __CUDA_ARCH__ or __SIMT_EMULATOR__ are left as they are. */
    insertion *inserts;
    size_t ninserts, inserts_cap;
    /* Indexes made on first use, so that a question about a line, a name
     * or a function costs a search instead of a pass over the file: the
     * index of each line break (line_of); each identifier in a #define,
     * sorted by its text (named_in_define); the indices of st.fns, sorted
     * by name, made once the functions are all found (fns_named). */
    size_t *breaks, nbreaks;
    int breaks_made;
    span *define_words;
    size_t ndefine_words, define_words_cap;
    int define_words_made;
    size_t *by_name, nby_name;
    /* And the match of each bracket token (tok_match), and the names
     * declared in a function's tokens [declared_b, declared_e), as token
     * indices sorted by name (declared_within, for one function at a time). */
    size_t *match;
    size_t *declared, ndeclared, declared_b, declared_e;
    /* How many of the rewrites above the file needed: a header with none
     * is compiled as it is (see "the file's own headers"). */
    int changes;
    /* Launches of a kernel template whose arguments nvcc deduces: the src
     * position of each one's <<<, and the kernel names (token indices) whose
     * deduction helper is added (see deduction_helper). */
    size_t *deduced, ndeduced, deduced_cap;
    size_t helped[64];
    int nhelped;
    /* Launches that leave a kernel's default arguments out: the src
     * position of each one's <<<, and the defaults' text the rewrite adds
     * after the launch's own arguments (see filled_defaults). */
    struct {
        size_t pos;
        char *text;
    } *filled;
    size_t nfilled, filled_cap;
} st;

/* Back to the state before any file: frees what st holds, then clears it
 * whole, so that a field added to st starts each file cleared. */
static void rewrite_reset(void)
{
    for (size_t k = 0; k < st.ninserts; k++) free(st.inserts[k].text);
    free(st.inserts);
    free(st.dirs);
    free(st.toks);
    free(st.fns);
    free(st.unpaired);
    free(st.breaks);
    free(st.define_words);
    free(st.by_name);
    free(st.match);
    free(st.declared);
    free(st.deduced);
    for (size_t k = 0; k < st.nfilled; k++) free(st.filled[k].text);
    free(st.filled);
    memset(&st, 0, sizeof(st));
}

/* The number of entries of the sorted a[0, n) below v. */
static size_t count_below(const size_t *a, size_t n, size_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The line of byte pos: one more than the line breaks before it. */
static int line_of(size_t pos)
{
    if (!st.breaks_made) {
        size_t cap = 0;
        for (size_t i = 0; i < len; i++)
            if (src[i] == '\n') {
                st.breaks = grow(st.breaks, &cap, st.nbreaks, sizeof(*st.breaks));
                st.breaks[st.nbreaks++] = i;
            }
        st.breaks_made = 1;
    }
    return 1 + (int)count_below(st.breaks, st.nbreaks, pos);
}

/* One line of a report about the file: "path:line: " and the rest,
 * printf-style (fmt says "error: ..." or "note: ...", with its '\n'). */
static void say(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", path, line);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

static void fail(size_t pos, const char *what)
{
    say(line_of(pos), "error: simt-rewrite: %s\n", what);
    exit(1);
}

/* Length of a comment, string or character literal starting at i, or 0. */
static size_t skip_lexeme(size_t i)
{
    if (src[i] == '/' && i + 1 < len && src[i + 1] == '/') {
        size_t j = i;
        while (j < len && src[j] != '\n') j++;
        return j - i;
    }
    if (src[i] == '/' && i + 1 < len && src[i + 1] == '*') {
        /* Up to len, not a NUL: g++ ignores a NUL byte in a comment and
         * ends the comment at its "*" "/". */
        for (size_t j = i + 2; j + 1 < len; j++)
            if (src[j] == '*' && src[j + 1] == '/') return j + 2 - i;
        return len - i;
    }
    if (src[i] == '"' || src[i] == '\'') {
        /* A digit separator (1'000) is not a character literal. */
        if (src[i] == '\'' && i > 0 && isxdigit((unsigned char)src[i - 1])) return 0;
        char q = src[i];
        size_t j = i + 1;
        while (j < len && src[j] != q && src[j] != '\n') j += (src[j] == '\\') ? 2 : 1;
        return (j < len ? j + 1 : len) - i;
    }
    return 0;
}

static int is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* From i at '#': the line break that ends the directive (or len), past
 * continuations, and past comments, which may run on over lines. */
static size_t directive_end(size_t i)
{
    size_t j = i;
    while (j < len && src[j] != '\n') {
        size_t k;
        if (src[j] == '\\' && j + 1 < len && src[j + 1] == '\n') j++;
        else if ((k = skip_lexeme(j)) && src[j] != '\'') { /* #error it's: no character literal */
            j += k;
            continue;
        }
        j++;
    }
    return j;
}

/* A '#' is a directive's start where only white space stands before it on
 * its line, and it is in no comment or literal. */
static void find_directives(void)
{
    int line_start = 1;
    for (size_t i = 0; i < len;) {
        if (src[i] == '#' && line_start) {
            st.dirs = grow(st.dirs, &st.dirs_cap, st.ndirs, sizeof(*st.dirs));
            st.dirs[st.ndirs].start = i;
            i = st.dirs[st.ndirs++].end = directive_end(i);
            continue;
        }
        size_t k = skip_lexeme(i);
        if (k) {
            line_start = 0;
            i += k;
            continue;
        }
        if (src[i] == '\n') line_start = 1;
        else if (!isspace((unsigned char)src[i])) line_start = 0;
        i++;
    }
}

/* The end of the directive that starts at i, or 0 where none does. */
static size_t directive_at(size_t i)
{
    size_t lo = 0, hi = st.ndirs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st.dirs[mid].start < i) lo = mid + 1;
        else hi = mid;
    }
    return lo < st.ndirs && st.dirs[lo].start == i ? st.dirs[lo].end : 0;
}

static int unpaired_brace(size_t i);

/* From i (just after an opening bracket), find the index of the closer that
 * ends it at depth 0; the closer is ")", ">>>", "]", "}" or ";". A brace
 * of a later #if branch that pairs with none in it is no bracket here (see
 * unpair_braces), and neither is anything in a directive after i: a
 * directive's brackets are no part of the code's (#define CLOSE }). */
static size_t find_close(size_t i, const char *closer)
{
    int depth = 0;
    size_t cl = strlen(closer);
    while (i < len) {
        size_t k = skip_lexeme(i);
        if (k) {
            i += k;
            continue;
        }
        if (src[i] == '#' && (k = directive_at(i)) != 0) {
            i = k;
            continue;
        }
        if (unpaired_brace(i)) {
            i++;
            continue;
        }
        char c = src[i];
        if (depth == 0 && strncmp(src + i, closer, cl) == 0) return i;
        if (c == '(' || c == '[' || c == '{') depth++;
        if (c == ')' || c == ']' || c == '}') depth--;
        if (depth < 0) return (size_t)-1;
        i++;
    }
    return (size_t)-1;
}

static int in_function(void)
{
    int n = st.nscopes < (int)sizeof(st.scopes) ? st.nscopes : (int)sizeof(st.scopes);
    for (int i = 0; i < n; i++)
        if (st.scopes[i] == 'f') return 1;
    return 0;
}

static char brace_kind(const buf *out)
{
    /* Look at the text before the brace: "namespace x", "namespace", or
     * extern "C" make a namespace-like scope; struct/class/enum/union bodies
     * are not function bodies either; anything else is treated as code. */
    size_t e = out->n;
    while (e > 0 && isspace((unsigned char)out->s[e - 1])) e--;
    size_t b = e;
    while (b > 0 && out->s[b - 1] != ';' && out->s[b - 1] != '}' && out->s[b - 1] != '{' && out->s[b - 1] != ')' &&
           out->s[b - 1] != '#' && e - b < 200)
        b--;
    if (b > 0 && out->s[b - 1] == ')') return 'f';
    char tmp[256];
    size_t n = e - b < 255 ? e - b : 255;
    memcpy(tmp, out->s + b, n);
    tmp[n] = 0;
    /* A NUL byte copied from a comment would end the searches below early. */
    for (size_t k = 0; k < n; k++)
        if (!tmp[k]) tmp[k] = ' ';
    if (strstr(tmp, "namespace") || strstr(tmp, "extern \"C\"") || strstr(tmp, "extern \"C++\"")) return 'n';
    if (strstr(tmp, "struct") || strstr(tmp, "class") || strstr(tmp, "union") || strstr(tmp, "enum")) return 's';
    if (e > 0 && (out->s[e - 1] == '=' || out->s[e - 1] == ',' || out->s[e - 1] == '(')) return 'i';
    return 'f';
}

/* The parts of a launch whose <<< starts at src[i]: the configuration ends
 * at *cfg_end (its ">>>"), the arguments run from *args_start (after the
 * '(') to *args_end (the ')'). 0, or which part is broken: 1 the
 * configuration is not closed, 2 no '(' follows it, 3 the arguments are
 * not closed. */
static int launch_parts(size_t i, size_t *cfg_end, size_t *args_start, size_t *args_end)
{
    *cfg_end = find_close(i + 3, ">>>");
    if (*cfg_end == (size_t)-1) return 1;
    size_t j = *cfg_end + 3;
    while (j < len && isspace((unsigned char)src[j])) j++;
    if (j >= len || src[j] != '(') return 2;
    *args_start = j + 1;
    *args_end = find_close(*args_start, ")");
    return *args_end == (size_t)-1 ? 3 : 0;
}

/* name<<<cfg>>>(args): the name is already in out; take it back. The
 * line breaks between the name and the <<< go after the launch, with those
 * before its arguments, so that the lines after it keep their numbers. */
static size_t rewrite_launch(buf *out, size_t i)
{
    size_t e = out->n, gap_lines = 0;
    while (e > 0 && isspace((unsigned char)out->s[e - 1])) gap_lines += out->s[--e] == '\n';
    size_t b = e;
    if (b > 0 && out->s[b - 1] == '>') { /* template-id: kernel<...> */
        int depth = 0, parens = 0, found = 0;
        while (b > 0 && !found) {
            char c = out->s[--b];
            /* kernel<(N > 64)>: a '<' or '>' in parentheses compares */
            parens += (c == ')' || c == ']') - (c == '(' || c == '[');
            if (parens) continue;
            if (c == ';' || c == '{' || c == '}') break; /* the statement's start: no '<' opens the '>' */
            if (c == '>') depth++;
            if (c == '<' && --depth == 0) found = 1;
        }
        if (!found) b = e; /* (x > y)<<<...>>>: no name, refused below */
    }
    while (b > 0 && (is_ident(out->s[b - 1]) || out->s[b - 1] == ':')) b--;
    if (b == e) fail(i, "a kernel launch <<<...>>> must follow the kernel's name");
    size_t name_n = e - b; /* copied whole: a NUL byte in the file is no end here */
    char *name = malloc(name_n);
    if (!name) {
        perror("simt-rewrite");
        exit(2);
    }
    memcpy(name, out->s + b, name_n);
    out->n = b;
    out->s[b] = 0;

    size_t cfg_start = i + 3, cfg_end, args_start, args_end;
    static const char *const broken[] = {NULL, "unterminated <<<...>>> launch configuration",
                                         "expected (arguments) after <<<...>>>", "unterminated kernel argument list"};
    int part = launch_parts(i, &cfg_end, &args_start, &args_end);
    if (part) fail(i, broken[part]);
    for (size_t j = cfg_end + 3; j < args_start; j++) gap_lines += src[j] == '\n';

    int deduced = 0;
    for (size_t d = 0; d < st.ndeduced && !deduced; d++) deduced = st.deduced[d] == i;
    /* A kernel template whose arguments the launch's deduce (see
     * deduction_helper): the arguments go through a generic lambda, once, to
     * the helper's call, which deduces them, and to the launch of the
     * kernel's address taken as the type the helper returns. */
    if (deduced) puts_(out, "[&](auto &&...simt_a) { ");
    puts_(out, "::simt::launch(::simt::LaunchConfig(");
    put(out, src + cfg_start, cfg_end - cfg_start);
    puts_(out, "), ");
    if (deduced) {
        size_t q = name_n; /* past the qualifier (ns::), if any */
        while (q >= 2 && !(name[q - 1] == ':' && name[q - 2] == ':')) q--;
        if (q < 2) q = 0;
        puts_(out, "static_cast<decltype(");
        put(out, name, q);
        puts_(out, "simt_kernel_of_");
        put(out, name + q, name_n - q);
        puts_(out, "(simt_a...))>(&");
    }
    put(out, name, name_n);
    puts_(out, deduced ? "))(static_cast<decltype(simt_a) &&>(simt_a)...); }(" : ")(");
    put(out, src + args_start, args_end - args_start);
    for (size_t d = 0; d < st.nfilled; d++)
        if (st.filled[d].pos == i) puts_(out, st.filled[d].text);
    puts_(out, ")");
    for (size_t k = 0; k < gap_lines; k++) puts_(out, "\n");
    free(name);
    return args_end + 1;
}

/* Remove alignment specifiers (__align__(n), alignas(n)) from a type: the
 * dynamic shared memory is allocated suitably aligned, and an attribute in a
 * cast or template argument only draws a warning. */
static void strip_alignment(char *t)
{
    static const char *const kws[] = {"__align__", "alignas"};
    for (int k = 0; k < 2; k++) {
        char *p;
        while ((p = strstr(t, kws[k])) != NULL) {
            char *q = p + strlen(kws[k]);
            while (*q == ' ') q++;
            if (*q != '(') break;
            int depth = 0;
            do {
                if (*q == '(') depth++;
                if (*q == ')') depth--;
                q++;
            } while (*q && depth > 0);
            memmove(p, q, strlen(q) + 1);
        }
    }
}

/* src[b, e) as text for one line: a line break or continuation becomes a
 * space, and so does a comment, since a // comment would hide the rest of
 * the line the text is put on. */
static char *one_line(size_t b, size_t e)
{
    char *t = malloc(e - b + 1);
    if (!t) {
        perror("simt-rewrite");
        exit(2);
    }
    size_t n = 0;
    for (size_t k = b; k < e;) {
        size_t l = skip_lexeme(k);
        if (l && src[k] == '/') {
            t[n++] = ' ';
            k += l;
            continue;
        }
        /* A NUL byte too, which g++ ignores: the text is a C string. */
        for (size_t m = l ? l : 1; m > 0 && k < e; m--, k++)
            t[n++] = src[k] == '\n' || src[k] == '\\' || !src[k] ? ' ' : src[k];
    }
    t[n] = 0;
    return t;
}

/* extern __shared__ decl; -- i points at "extern". The declaration ends at
 * its first ';' and names the identifier before its last '[', neither in a
 * comment or a literal: a comment after the name that holds "s[i];" is no
 * part of the declaration's text. */
static size_t rewrite_extern_shared(buf *out, size_t i, size_t after_kw)
{
    size_t semi = after_kw, lb = 0, nb = 0, ne = 0, ident_b = 0, ident_e = 0;
    while (semi < len && src[semi] != ';') {
        size_t l = skip_lexeme(semi);
        if (l) {
            semi += l;
            continue;
        }
        if (is_ident(src[semi])) {
            for (ident_b = semi; semi < len && is_ident(src[semi]); semi++)
                ;
            ident_e = semi;
            continue;
        }
        if (src[semi] == '[') {
            lb = semi;
            nb = ident_b;
            ne = ident_e;
        }
        if (!isspace((unsigned char)src[semi])) ident_b = ident_e = 0; /* the name comes right before the '[' */
        semi++;
    }
    if (semi >= len) fail(i, "unterminated extern __shared__ declaration");
    if (!lb) fail(i, "extern __shared__ must declare an array: extern __shared__ T name[];");
    if (nb == ne) fail(i, "cannot find the name in an extern __shared__ declaration");
    char *type = one_line(after_kw, nb);
    char *name = strndup(src + nb, ne - nb);
    /* Keep the line count: newlines inside the declaration go after it. */
    int nl = 0;
    for (size_t k = i; k < semi; k++) nl += src[k] == '\n';
    strip_alignment(type);
    if (in_function()) {
        /* unused: declaring the array and not using it is no warning for nvcc */
        puts_(out, type);
        puts_(out, " *const ");
        puts_(out, name);
        puts_(out, " __attribute__((unused)) = (");
        puts_(out, type);
        puts_(out, " *)simt_dynamic_shared();");
    } else {
        puts_(out, "static const ::simt::DynShared<");
        puts_(out, type);
        puts_(out, "> ");
        puts_(out, name);
        puts_(out, ";");
    }
    for (int k = 0; k < nl; k++) puts_(out, "\n");
    free(type);
    free(name);
    return semi + 1;
}

/* Order of the texts of two identifiers (spans), for sorting and search. */
static int word_order(const void *a, const void *b)
{
    const span *x = a, *y = b;
    size_t nx = x->end - x->start, ny = y->end - y->start;
    int c = memcmp(src + x->start, src + y->start, nx < ny ? nx : ny);
    return c ? c : (nx > ny) - (nx < ny);
}

/* Is the identifier src[nb, nb + n) a word of any #define of the file
 * (in a comment or a literal there too)? */
static int named_in_define(size_t nb, size_t n)
{
    if (!st.define_words_made) {
        for (size_t d = 0; d < st.ndirs; d++) {
            size_t k = st.dirs[d].start + 1, e = st.dirs[d].end;
            while (k < e && (src[k] == ' ' || src[k] == '\t')) k++;
            if (e - k < 6 || strncmp(src + k, "define", 6) != 0 || is_ident(src[k + 6])) continue;
            for (; k < e; k++) {
                if (!is_ident(src[k])) continue;
                size_t w = k;
                while (w < e && is_ident(src[w])) w++;
                st.define_words = grow(st.define_words, &st.define_words_cap, st.ndefine_words,
                                       sizeof(*st.define_words));
                st.define_words[st.ndefine_words++] = (span){k, w};
                k = w;
            }
        }
        if (st.ndefine_words) qsort(st.define_words, st.ndefine_words, sizeof(*st.define_words), word_order);
        st.define_words_made = 1;
    }
    span key = {nb, nb + n};
    return st.ndefine_words && bsearch(&key, st.define_words, st.ndefine_words, sizeof(key), word_order) != NULL;
}

/* How the block that holds `from` uses the identifier src[nb, nb+n) after
 * it: 0 not at all, 1 only as the target of plain stores (name[i] = ...),
 * 2 any other way. A #define of the file that names it counts as a use of
 * the other kind (a macro may be its only reader), and so does anything this
 * scanner cannot see the end of. Comments and literals do not count. */
static int uses_after(size_t nb, size_t n, size_t from)
{
    size_t close = find_close(from, "}");
    if (close == (size_t)-1) return 2;
    if (named_in_define(nb, n)) return 2;
    int use = 0;
    for (size_t k = from; k < close;) {
        size_t l = skip_lexeme(k);
        if (l) {
            k += l;
            continue;
        }
        if (!is_ident(src[k]) || (k > 0 && is_ident(src[k - 1]))) {
            k++;
            continue;
        }
        size_t e = k;
        while (e < len && is_ident(src[e])) e++;
        if (e - k != n || memcmp(src + k, src + nb, n)) {
            k = e;
            continue;
        }
        /* name[...][...] = (not ==): a store and nothing else. */
        size_t j = e, subs = 0;
        for (;;) {
            while (j < close && isspace((unsigned char)src[j])) j++;
            if (j >= close || src[j] != '[') break;
            size_t r = find_close(j + 1, "]");
            if (r == (size_t)-1 || r >= close) return 2;
            j = r + 1;
            subs++;
        }
        int store = subs > 0 && j + 1 < close && src[j] == '=' && src[j + 1] != '=';
        if (!store) return 2;
        use = 1;
        k = e;
    }
    return use;
}

static int mentions(size_t b, size_t e, const char *word);

/* Is src[i] the word static, next to __shared__ (static __shared__ float
 * s[32], the block reduction's classic, or __shared__ static)? nvcc takes
 * it, a __shared__ variable being static anyway; here __shared__ already
 * expands to "static thread_local", and g++ refuses a second static
 * ("conflicting specifiers"). The caller blanks the word, so columns stay. */
static int static_by_shared(size_t i)
{
    if (strncmp(src + i, "static", 6) != 0 || (i > 0 && is_ident(src[i - 1])) || is_ident(src[i + 6])) return 0;
    size_t j = i + 6, l = 0;
    while (j < len && (isspace((unsigned char)src[j]) || (src[j] == '/' && (l = skip_lexeme(j)))))
        j += isspace((unsigned char)src[j]) ? 1 : l; /* a comment may stand between the words */
    if (strncmp(src + j, "__shared__", 10) == 0 && !is_ident(src[j + 10])) return 1;
    size_t k = i;
    while (k > 0 && isspace((unsigned char)src[k - 1])) k--;
    return k >= 10 && strncmp(src + k - 10, "__shared__", 10) == 0 && (k == 10 || !is_ident(src[k - 11]));
}

/* src[b, e), with a static next to __shared__ blanked (static_by_shared). */
static void put_blanking_static(buf *out, size_t b, size_t e)
{
    size_t from = b;
    for (size_t k = b; k < e; k++) {
        size_t l = skip_lexeme(k);
        if (l) {
            k += l - 1;
            continue;
        }
        if (src[k] == 's' && static_by_shared(k)) {
            put(out, src + from, k - from);
            puts_(out, "      ");
            from = k + 6;
            k += 5;
        }
    }
    put(out, src + from, e - from);
}

/* __shared__ decl; inside a function -- i points at "__shared__". The
 * declaration is copied as it is, followed on the same line by a call for
 * each variable it declares (__shared__ float As[T][T], Bs[T][T]; declares
 * two) that fills it with 0xff bytes the first time a thread of the block
 * gets there, and tells the runtime where it lies (simt_shared_first_use):
 * a thread-local static would otherwise start as zeros, a luck no GPU
 * gives, and cp.async, ldmatrix and wmma test their addresses against the
 * variables told. A struct, union or class type declared in the
 * declaration (__shared__ struct { ... } s;) is passed over to the name
 * after its body. A declaration this cannot name (a template type with a
 * comma in its arguments, a braced initializer) is copied without the
 * calls, and so is a variable whose name the rest of its block never uses:
 * the call would be a use, and without it g++ says "unused variable", as
 * nvcc says "declared but never referenced" (an error under the labs'
 * -Werror; see uses_after for one that is only stored to). Returns the
 * index after the ';', or 0 to leave the text to the caller. */
enum { SHARED_DECLARATORS_MAX = 16 };

static size_t rewrite_static_shared(buf *out, size_t i)
{
    size_t semi = find_close(i, ";");
    if (semi == (size_t)-1) return 0;
    /* Each declarator's name: the identifier before its first '[' outside
     * parentheses (past __align__(16) and the like), or before the ',' or
     * ';' that ends it. */
    size_t ends[SHARED_DECLARATORS_MAX], names[SHARED_DECLARATORS_MAX], from = i;
    int n = 0, depth = 0, brackets = 0, angle = 0;
    ends[0] = (size_t)-1;
    for (size_t k = i;; k++) {
        size_t l = k < semi ? skip_lexeme(k) : 0; /* a comment's '=' or ',' is none of the declaration's */
        if (l) {
            k += l - 1;
            continue;
        }
        if (k < semi && src[k] == '{' && depth == 0 && brackets == 0 &&
            (mentions(i, k, "struct") || mentions(i, k, "union") || mentions(i, k, "class"))) {
            /* The type's body: its members are not the declarator. */
            size_t close = find_close(k + 1, "}");
            if (close == (size_t)-1 || close > semi) return 0;
            k = close;
            continue;
        }
        if (k == semi || (src[k] == ',' && depth == 0 && brackets == 0)) {
            /* The declarator [from, k) ends: find its name. */
            if ((k < semi && angle) || n == SHARED_DECLARATORS_MAX) return 0;
            size_t e = ends[n] == (size_t)-1 ? k : ends[n];
            while (e > from && isspace((unsigned char)src[e - 1])) e--;
            size_t nb = e;
            while (nb > from && is_ident(src[nb - 1])) nb--;
            if (nb == e || (n == 0 && nb <= i + 10) || isdigit((unsigned char)src[nb])) return 0;
            names[n] = nb;
            ends[n++] = e;
            if (k == semi) break;
            from = k + 1;
            ends[n] = (size_t)-1;
            continue;
        }
        if (src[k] == '(') depth++;
        if (src[k] == ')') depth--;
        if (depth == 0 && src[k] == '[' && brackets++ == 0 && ends[n] == (size_t)-1) ends[n] = k;
        if (depth == 0 && src[k] == ']') brackets--;
        if (depth || brackets) continue;
        /* __shared__ float sum = 0: nvcc refuses it (shared memory is not
         * set at launch); here it would be set once per OS thread. */
        /* (strchr would find a NUL byte, the string's own end, too) */
        if (src[k] == '=' && src[k + 1] != '=' && !(src[k - 1] && strchr("=<>!", src[k - 1])))
            fail(k, "initializer not allowed for __shared__ variable (nvcc refuses it: shared memory starts "
                    "undefined in each block; set it from one thread, then __syncthreads())");
        if (src[k] == '<') angle = 1; /* template arguments: a ',' there ends no declarator */
        if (src[k] == '{') return 0;
    }
    /* __shared__ alignas(16) float a[64]: nvcc takes the alignas there, but
     * g++ takes a standard attribute only before the "static thread_local"
     * that __shared__ expands to. It goes first, and the text after it
     * keeps its columns. */
    size_t a = i + 10, p = 0, close = (size_t)-1;
    while (a < semi && isspace((unsigned char)src[a])) a++;
    if (strncmp(src + a, "alignas", 7) == 0 && !is_ident(src[a + 7])) {
        p = a + 7;
        while (p < semi && isspace((unsigned char)src[p])) p++;
        if (src[p] == '(') close = find_close(p + 1, ")");
    }
    if (close != (size_t)-1 && close < semi) {
        put(out, src + a, close + 1 - a);
        put(out, src + i + 10, a - (i + 10));
        puts_(out, "__shared__");
        put_blanking_static(out, close + 1, semi + 1);
    } else {
        put_blanking_static(out, i, semi + 1);
    }
    for (int d = 0; d < n; d++) {
        const char *name = src + names[d];
        size_t len = ends[d] - names[d];
        int use = uses_after(names[d], len, semi + 1);
        if (use == 0) continue;
        if (use == 1) {
            /* Stored to and never read: nvcc says "variable was set but never
             * used" (#550-D), which g++ does not say of an array. A variable
             * that is only set makes g++ say it, naming this one. */
            puts_(out, " int ");
            put(out, name, len);
            puts_(out, "_is_stored_to_but_never_read; ");
            put(out, name, len);
            puts_(out, "_is_stored_to_but_never_read = 0;");
        }
        puts_(out, " simt_shared_first_use(&");
        put(out, name, len);
        puts_(out, ", sizeof(");
        put(out, name, len);
        puts_(out, "), \"");
        put(out, name, len);
        puts_(out, "\", __FILE__, __LINE__);");
    }
    return semi + 1;
}

/* --- execution spaces ------------------------------------------------------
 * nvcc compiles a __global__ or __device__ function for the GPU, where a
 * call to a plain (host) function does not compile; here everything is
 * compiled for the CPU, where such a call just works. So a kernel that calls
 * a helper its author forgot to mark __device__ would pass every check on
 * the emulator and fail to build for a GPU. This pass finds those calls
 * between the functions of the file itself and reports them with nvcc's
 * message, and the reverse: host code that calls a __device__ function, or
 * calls a kernel without <<<...>>>; and a __host__ __device__ function that
 * calls a function of one side only. It is a scanner too, so it stays on
 * the safe side: a function whose specifiers come from a macro, a name
 * declared in more than one space, template __host__ __device__ functions,
 * calls of __host__ __device__ functions, calls
 * through a member, a qualified name or template arguments, names the body
 * also declares, and anything inside #if ... __CUDA_ARCH__ (or
 * __SIMT_EMULATOR__) are left alone: nvcc may accept those. A constexpr
 * function without __device__ counts as a host one, as it does for nvcc
 * without --expt-relaxed-constexpr. */

enum { SP_HOST = 1, SP_DEVICE = 2, SP_GLOBAL = 4, SP_BOTH = 8, SP_UNKNOWN = 16 };

static int tok_is(size_t t, const char *s)
{
    return t < st.ntoks && st.toks[t].n == strlen(s) && strncmp(src + st.toks[t].pos, s, st.toks[t].n) == 0;
}

static int tok_punct(size_t t, char c)
{
    return t < st.ntoks && st.toks[t].type == T_PUNCT && st.toks[t].n == 1 && src[st.toks[t].pos] == c;
}

static int same_name(size_t a, size_t b)
{
    return st.toks[a].n == st.toks[b].n && strncmp(src + st.toks[a].pos, src + st.toks[b].pos, st.toks[a].n) == 0;
}

static int mentions(size_t b, size_t e, const char *word)
{
    size_t n = strlen(word);
    for (size_t i = b; i + n <= e; i++)
        if (strncmp(src + i, word, n) == 0 && (i == b || !is_ident(src[i - 1])) && (i + n == e || !is_ident(src[i + n])))
            return 1;
    return 0;
}

static void add_token(int type, size_t pos, size_t n, int arch)
{
    st.toks = grow(st.toks, &st.toks_cap, st.ntoks, sizeof(*st.toks));
    st.toks[st.ntoks++] = (token){type, pos, n, arch};
}

/* Braces split across the branches of a conditional:
 *   #ifdef __SIMT_EMULATOR__
 *   void f(int x) {
 *   #else
 *   void f(long x) {
 *   #endif
 *       ...
 *   }
 * The compiler sees one branch, so one '{' opens the body; a scan that
 * counted both would never find the body's end, and everything after it
 * (the next host function's marks, a kernel's launch-bounds check) would be
 * lost. So the first branch's braces count as they are, and a later
 * branch's count only where they pair within that branch: a function
 * defined whole in each branch is still seen in each, and a brace that
 * opens or closes something across the #endif is left to the first branch.
 * (With no #else the one branch counts: that is what the compiler sees
 * when the condition holds.) Such braces become T_UNPAIRED tokens, and the
 * copy in main() and find_close skip them too (unpaired_brace), so all
 * agree on which braces enclose what: the end of the block in which
 * uses_after looks for a __shared__ variable's reads is the one the
 * compiler sees. */

static int unpaired_brace(size_t i) { return st.unpaired && st.unpaired[i]; }

/* Tokens [b, ntoks), a later branch of a conditional: mark its braces that
 * pair with none in it. A '}' with no '{' before it is one (forwards), then
 * a '{' with no '}' after it (backwards). */
static void unpair_braces(size_t b)
{
    if (!st.unpaired && !(st.unpaired = calloc(len + 1, 1))) {
        perror("simt-rewrite");
        exit(2);
    }
    int depth = 0;
    for (size_t t = b; t < st.ntoks; t++) {
        if (st.toks[t].type != T_PUNCT || st.toks[t].n != 1) continue;
        if (src[st.toks[t].pos] == '{') depth++;
        if (src[st.toks[t].pos] == '}' && depth-- == 0) {
            depth = 0;
            st.toks[t].type = T_UNPAIRED;
            st.unpaired[st.toks[t].pos] = 1;
        }
    }
    depth = 0;
    for (size_t t = st.ntoks; t-- > b;) {
        if (st.toks[t].type != T_PUNCT || st.toks[t].n != 1) continue;
        if (src[st.toks[t].pos] == '}') depth++;
        if (src[st.toks[t].pos] == '{' && depth-- == 0) {
            depth = 0;
            st.toks[t].type = T_UNPAIRED;
            st.unpaired[st.toks[t].pos] = 1;
        }
    }
}

/* Is the directive's name, src[k, w), the word d? The whole word: the
 * preprocessor skips a line such as "#ifd X" in an #if 0 group, where it
 * opens no conditional, so a prefix of "ifdef" must not open one here. */
static int directive_is(size_t k, size_t w, const char *d)
{
    return w - k == strlen(d) && strncmp(src + k, d, w - k) == 0;
}

/* A preprocessor line, src[i, e) (i at '#'). Keeps the stack of
 * conditionals and notes the macros the file defines. */
static void directive(size_t i, size_t e, unsigned *arch_stack, int *depth)
{
    size_t k = i + 1;
    while (k < e && (src[k] == ' ' || src[k] == '\t')) k++;
    size_t w = k;
    while (w < e && is_ident(src[w])) w++;
    int arch = mentions(w, e, "__CUDA_ARCH__") || mentions(w, e, "__SIMT_EMULATOR__");
    if (directive_is(k, w, "if") || directive_is(k, w, "ifdef") || directive_is(k, w, "ifndef")) {
        if (*depth < 32) {
            arch_stack[*depth] = arch;
            st.branches[*depth].later = 0;
        }
        (*depth)++;
    } else if (directive_is(k, w, "elif") || directive_is(k, w, "elifdef") || directive_is(k, w, "elifndef") ||
               directive_is(k, w, "else")) {
        if (*depth > 0 && *depth <= 32) {
            if (src[k + 2] == 'i') arch_stack[*depth - 1] |= arch;
            if (st.branches[*depth - 1].later) unpair_braces(st.branches[*depth - 1].start);
            st.branches[*depth - 1].later = 1;
            st.branches[*depth - 1].start = st.ntoks;
        }
    } else if (directive_is(k, w, "endif")) {
        if (*depth > 0 && *depth <= 32 && st.branches[*depth - 1].later) unpair_braces(st.branches[*depth - 1].start);
        if (*depth > 0) (*depth)--;
    } else if (directive_is(k, w, "define") && st.nmacros < 256) {
        size_t nb = w;
        while (nb < e && (src[nb] == ' ' || src[nb] == '\t')) nb++;
        size_t ne = nb;
        while (ne < e && is_ident(src[ne])) ne++;
        if (ne > nb) {
            st.macros[st.nmacros].pos = nb;
            st.macros[st.nmacros].n = ne - nb;
            st.macros[st.nmacros].spaces = mentions(ne, e, "__device__") || mentions(ne, e, "__host__") ||
                                     mentions(ne, e, "__global__");
            st.nmacros++;
        }
    }
}

static void tokenize(void)
{
    unsigned arch_stack[32];
    int depth = 0;
    size_t i = 0;
    while (i < len) {
        char c = src[i];
        if (isspace((unsigned char)c) || !c) { /* g++ ignores a NUL byte (with a warning) */
            i++;
            continue;
        }
        size_t e;
        if (c == '#' && (e = directive_at(i)) != 0) {
            directive(i, e, arch_stack, &depth);
            i = e;
            continue;
        }
        int arch = 0;
        for (int d = 0; d < depth && d < 32; d++) arch |= arch_stack[d];
        if (isdigit((unsigned char)c) || (c == '.' && i + 1 < len && isdigit((unsigned char)src[i + 1]))) {
            size_t j = i + 1;
            while (j < len && (is_ident(src[j]) || src[j] == '.' || src[j] == '\'' ||
                               ((src[j] == '+' || src[j] == '-') && strchr("eEpP", src[j - 1]))))
                j++;
            add_token(T_NUM, i, j - i, arch);
            i = j;
            continue;
        }
        size_t k = skip_lexeme(i);
        if (k) {
            if (c == '"' || c == '\'') add_token(T_STR, i, k, arch);
            i += k;
            continue;
        }
        if (is_ident(c)) {
            size_t j = i;
            while (j < len && is_ident(src[j])) j++;
            add_token(T_IDENT, i, j - i, arch);
            i = j;
            continue;
        }
        if ((c == ':' && i + 1 < len && src[i + 1] == ':') || (c == '-' && i + 1 < len && src[i + 1] == '>')) {
            add_token(T_PUNCT, i, 2, arch);
            i += 2;
            continue;
        }
        add_token(T_PUNCT, i, 1, arch);
        i++;
    }
}

/* The token that closes the bracket at t ('(' '[' '{'), or ntoks. */
static size_t tok_match(size_t t)
{
    if (!st.match && st.ntoks) {
        /* Once for all: a closer of any kind closes the innermost opener,
         * as the count below does from each. Made after tokenize, which is
         * done before the first question (its last branch unpairs braces). */
        size_t *stack = malloc(st.ntoks * sizeof(*stack)), n = 0;
        st.match = malloc(st.ntoks * sizeof(*st.match));
        if (!stack || !st.match) {
            perror("simt-rewrite");
            exit(2);
        }
        for (size_t u = 0; u < st.ntoks; u++) {
            st.match[u] = st.ntoks;
            if (tok_punct(u, '(') || tok_punct(u, '[') || tok_punct(u, '{')) stack[n++] = u;
            if ((tok_punct(u, ')') || tok_punct(u, ']') || tok_punct(u, '}')) && n > 0) st.match[stack[--n]] = u;
        }
        free(stack);
    }
    if (tok_punct(t, '(') || tok_punct(t, '[') || tok_punct(t, '{')) return st.match[t];
    int depth = 0; /* not at an opener: counted from t */
    for (size_t u = t; u < st.ntoks; u++) {
        if (tok_punct(u, '(') || tok_punct(u, '[') || tok_punct(u, '{')) depth++;
        if (tok_punct(u, ')') || tok_punct(u, ']') || tok_punct(u, '}'))
            if (--depth == 0) return u;
    }
    return st.ntoks;
}

static int is_macro(size_t t, int with_spaces)
{
    for (int m = 0; m < st.nmacros; m++)
        if (st.macros[m].n == st.toks[t].n &&
            strncmp(src + st.macros[m].pos, src + st.toks[t].pos, st.toks[t].n) == 0 &&
            (!with_spaces || st.macros[m].spaces))
            return 1;
    return 0;
}

/* An identifier in capitals (DEVICE_INLINE): likely a macro from a header,
 * which may stand for an execution space. */
static int looks_like_macro(size_t t)
{
    if (st.toks[t].type != T_IDENT || st.toks[t].n < 2) return 0;
    int letters = 0;
    for (size_t k = 0; k < st.toks[t].n; k++) {
        char c = src[st.toks[t].pos + k];
        if (islower((unsigned char)c)) return 0;
        letters += isupper((unsigned char)c) != 0;
    }
    return letters > 0;
}

/* Words that may stand before '(' without naming a function. */
static int not_a_name(size_t t)
{
    static const char *const words[] = {"__launch_bounds__", "__align__", "alignas", "__attribute__", "__declspec",
                                        "decltype", "sizeof", "alignof", "noexcept", "throw", "__device__",
                                        "__host__", "__global__", "static_assert", "operator", "__maxnreg__", NULL};
    for (int w = 0; words[w]; w++)
        if (tok_is(t, words[w])) return 1;
    return 0;
}

/* A kernel's CUtensorMap parameter taken by value needs __grid_constant__:
 * without it nvcc copies the map into the thread's local memory, where the
 * TMA unit cannot read it, and the loads fault or read garbage on a GPU
 * (here the map is read from anywhere). open is the '(' of the parameters. */
static void grid_constant_params(size_t open)
{
    size_t close = tok_match(open), start = open + 1;
    for (size_t t = open + 1; t <= close; t++) {
        if (tok_punct(t, '(') || tok_punct(t, '[') || tok_punct(t, '<')) {
            if (!tok_punct(t, '<')) t = tok_match(t);
            continue;
        }
        if (!(tok_punct(t, ',') || t == close)) continue;
        int map = 0, indirect = 0, gc = 0;
        for (size_t u = start; u < t; u++) {
            map |= tok_is(u, "CUtensorMap") || tok_is(u, "CUtensorMap_st");
            indirect |= tok_punct(u, '*') || tok_punct(u, '&');
            gc |= tok_is(u, "__grid_constant__");
        }
        if (map && !indirect && !gc) {
            say(line_of(st.toks[start].pos),
                "error: a kernel's CUtensorMap parameter taken by value must be declared "
                "const __grid_constant__ CUtensorMap: without it nvcc copies the map to local memory, "
                "where TMA cannot read it (the loads fault on a GPU)\n");
            st.decl_errors++;
        }
        start = t + 1;
    }
}

/* Record the function that tokens [b, e) declare (e is its ';' or '{'),
 * if they declare one. */
static void declaration(size_t b, size_t e, size_t close)
{
    size_t name = st.ntoks;
    for (size_t t = b; t < e; t++) {
        if (tok_is(t, "template") && tok_punct(t + 1, '<')) { /* its parameters' defaults are no initializer */
            int depth = 0;
            for (t++; t < e; t++) {
                if (tok_punct(t, '(') || tok_punct(t, '[')) t = tok_match(t);
                else if (tok_punct(t, '<')) depth++;
                else if (tok_punct(t, '>') && --depth == 0) break;
            }
            continue;
        }
        if (tok_punct(t, '=') && name == st.ntoks) return; /* a variable with an initializer */
        if (tok_is(t, "typedef") || tok_is(t, "using") || tok_is(t, "friend")) return;
        if (tok_punct(t, '{')) return; /* a class body or a braced initializer */
        if (tok_punct(t, '(') || tok_punct(t, '[')) {
            size_t m = tok_match(t);
            if (tok_punct(t, '(') && t > b && st.toks[t - 1].type == T_IDENT && !not_a_name(t - 1)) name = t - 1;
            t = m;
        }
    }
    if (name == st.ntoks || name == b) return; /* no name, or no type before it (a macro call) */
    if (tok_is(name - 1, "::") || tok_is(name - 1, "->") || tok_punct(name - 1, '.') || tok_is(name - 1, "operator") ||
        tok_punct(name - 1, '~'))
        return;
    /* After the parameters only qualifiers may come. */
    for (size_t t = tok_match(name + 1) + 1; t < e; t++)
        if (!(tok_is(t, "const") || tok_is(t, "noexcept") || tok_is(t, "override") || tok_is(t, "final") ||
              tok_is(t, "volatile") || tok_punct(t, '&')))
            return;
    if (is_macro(name, 0)) return;
    int g = 0, d = 0, h = 0, unknown = 0, templ = 0, cexpr = 0;
    size_t inl = 0; /* an inline or __forceinline__ among the specifiers */
    for (size_t t = b; t < name; t++) {
        if (tok_is(t, "template") && tok_punct(t + 1, '<')) { /* skip the parameters' names */
            templ = 1;
            int depth = 0;
            for (t++; t < name; t++) {
                if (tok_punct(t, '<')) depth++;
                if (tok_punct(t, '>') && --depth == 0) break;
            }
            continue;
        }
        if (tok_punct(t, '(')) { /* __launch_bounds__(...) and the like */
            t = tok_match(t);
            continue;
        }
        g |= tok_is(t, "__global__");
        d |= tok_is(t, "__device__");
        h |= tok_is(t, "__host__");
        /* constexpr alone makes no function a __device__ one: nvcc refuses
         * its call in device code, at run time or in a constant expression
         * alike, as the course does not pass --expt-relaxed-constexpr. */
        cexpr |= tok_is(t, "constexpr");
        unknown |= tok_is(t, "consteval") || is_macro(t, 1) || looks_like_macro(t);
        if (!inl && (tok_is(t, "inline") || tok_is(t, "__forceinline__"))) inl = t;
    }
    if (g && !unknown && close) grid_constant_params(name + 1);
    /* nvcc: a kernel is __global__ alone (never also __host__ or
     * __device__), and never inline (a warning, #20050-D, that the course's
     * -Werror all-warnings makes an error): a launch needs its entry point. */
    if (g && !unknown && (d || h)) {
        say(line_of(st.toks[name].pos),
            "error: illegal combination of memory qualifiers (kernel \"%.*s\" is __global__ and %s)\n",
            (int)st.toks[name].n, src + st.toks[name].pos, d ? "__device__" : "__host__");
        say(line_of(st.toks[name].pos), "note: a kernel is __global__ only; for a helper that both a kernel and host "
                                        "code call, write a __host__ __device__ function that the kernel calls\n");
        st.decl_errors++;
    }
    if (g && !unknown && inl) {
        say(line_of(st.toks[inl].pos),
            "error: inline qualifier ignored for \"__global__\" function (kernel \"%.*s\"; nvcc warns, #20050-D, and "
            "the course's -Werror all-warnings makes it an error)\n",
            (int)st.toks[name].n, src + st.toks[name].pos);
        say(line_of(st.toks[inl].pos),
            "note: a kernel is never inlined, as a launch needs its entry point: drop the %.*s\n", (int)st.toks[inl].n,
            src + st.toks[inl].pos);
        st.decl_errors++;
    }
    fn_rec r = {b, name, SP_HOST, close ? e : 0, close, templ, cexpr, close ? close : e};
    if (unknown) r.space = SP_UNKNOWN;
    else if (g) r.space = SP_GLOBAL;
    else if (d && h) r.space = SP_BOTH;
    else if (d) r.space = SP_DEVICE;
    st.fns = grow(st.fns, &st.fns_cap, st.nfns, sizeof(*st.fns));
    st.fns[st.nfns++] = r;
}

/* Tokens [b, e) (e at the ';'): a __device__ or __constant__ variable with
 * a single declarator? Its name is the last identifier before the first
 * '[', '=' or the ';'. */
static void gpu_variable(size_t b, size_t e)
{
    const char *space = NULL;
    size_t end = e;
    for (size_t t = b; t < e; t++) {
        if (tok_is(t, "__managed__") || tok_punct(t, '(') || tok_punct(t, ',') || tok_punct(t, '{') ||
            tok_is(t, "typedef") || tok_is(t, "using"))
            return;
        if (tok_is(t, "__device__")) space = "__device__";
        if (tok_is(t, "__constant__")) space = "__constant__";
        if (tok_punct(t, '[') || tok_punct(t, '=')) {
            end = t;
            break;
        }
    }
    if (!space || end == b || st.toks[end - 1].type != T_IDENT || tok_is(end - 1, "__device__") ||
        tok_is(end - 1, "__constant__") || st.ngpu_vars == 256 || st.toks[end - 1].arch)
        return;
    st.gpu_vars[st.ngpu_vars].name = end - 1;
    st.gpu_vars[st.ngpu_vars++].space = space;
}

/* Calls that make a GPU variable's initializer dynamic: C and CUDA library
 * functions that are not constexpr (each checked with CUDA 13, in
 * "__device__ float v = sqrtf(2.0f);": "dynamic initialization is not
 * supported for a __device__ variable"; abs and dim3 pass and are not
 * listed). */
static int dynamic_library_call(size_t t)
{
    static const char *const names[] = {
        "sqrtf", "sqrt", "rsqrtf", "cbrtf", "expf", "exp", "exp2f", "exp10f", "expm1f", "logf", "log", "log2f",
        "log10f", "log1pf", "powf", "pow", "sinf", "cosf", "tanf", "asinf", "acosf", "atanf", "atan2f", "sinhf",
        "coshf", "tanhf", "erff", "hypotf", "fabsf", "fabs", "floorf", "ceilf", "roundf", "rintf", "truncf", "fmodf",
        "fmaf", "fmaxf", "fminf", "copysignf", "ldexpf", "nanf", "fdividef", "__fdividef", "max", "min",
        "make_float2", "make_float4", "make_int2", "make_uint3", "__float2half", "__float2half_rn", "__half",
        "__half2", "__floats2half2_rn", "__half2float", "__float2bfloat16", "__nv_bfloat16", "__floats2bfloat162_rn",
        "__int_as_float", "__uint_as_float", NULL};
    for (int k = 0; names[k]; k++)
        if (tok_is(t, names[k])) return 1;
    /* make_float3, make_uint4 and the rest of the vector types' family are
     * built alike (make_float3, make_double2, make_uint4, make_char4,
     * make_longlong2 and make_ushort1 checked too); a make_ of another name
     * may be a constexpr function of a header. */
    static const char *const vectors[] = {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                          "longlong", "ulonglong", "float", "double", NULL};
    const char *w = src + st.toks[t].pos;
    size_t n = st.toks[t].n;
    if (n < 7 || memcmp(w, "make_", 5) != 0 || w[n - 1] < '1' || w[n - 1] > '4') return 0;
    for (int k = 0; vectors[k]; k++)
        if (strlen(vectors[k]) == n - 6 && !memcmp(w + 5, vectors[k], n - 6)) return 1;
    return 0;
}

static size_t fns_named(size_t t, size_t *first);
static int all_constexpr(size_t t);

/* Tokens [b, e) (e at the ';'), a statement at namespace scope: a
 * __device__, __constant__ or __managed__ variable whose initializer calls
 * a function that is not constexpr? nvcc refuses it: a GPU variable's value
 * is part of the module, worked out when it is compiled, and no code runs to
 * set it. The emulator would call the function when the program starts, so
 * the file would run here and not build for a GPU. Only calls it is sure of
 * count: a function of this file that no declaration marks constexpr, or
 * one of dynamic_library_call's. Reports it and returns 1, else 0. */
static int dynamic_gpu_init(size_t b, size_t e)
{
    const char *space = NULL;
    size_t open = 0, close = e;
    for (size_t t = b; t < e; t++) {
        if (st.toks[t].arch || tok_is(t, "typedef") || tok_is(t, "using") || tok_is(t, "extern") ||
            tok_is(t, "struct") || tok_is(t, "class") || tok_is(t, "union") || tok_is(t, "enum"))
            return 0;
        if (!space && tok_is(t, "__managed__")) space = "__managed__";
        if (!space && tok_is(t, "__constant__")) space = "__constant__";
        if (!space && tok_is(t, "__device__")) space = "__device__";
        if (tok_punct(t, '=')) {
            open = t;
            break;
        }
        if (tok_punct(t, '{') && t > b && st.toks[t - 1].type == T_IDENT) { /* float v{...}; */
            open = t;
            close = tok_match(t);
            break;
        }
        if (tok_punct(t, '(') || tok_punct(t, '[')) t = tok_match(t);
    }
    if (!space || !open) return 0;
    for (size_t u = open + 1; u + 1 < close; u++) {
        if (st.toks[u].type != T_IDENT || !tok_punct(u + 1, '(') || tok_is(u - 1, "::") || tok_is(u - 1, "->") ||
            tok_punct(u - 1, '.'))
            continue;
        size_t f, n = fns_named(u, &f);
        int own = 0;
        for (size_t k = f; k < f + n; k++) own |= st.fns[st.by_name[k]].space != SP_UNKNOWN;
        if (!(own ? !all_constexpr(u) : dynamic_library_call(u))) continue;
        int line = line_of(st.toks[u].pos);
        say(line, "error: dynamic initialization is not supported for a %s variable\n", space);
        say(line,
            "note: a GPU variable's value is part of the compiled module, and %.*s(...) is not "
            "constexpr, so no compiler can work it out: write the value (a literal, or a constexpr "
            "function's result), or set the variable with cudaMemcpyToSymbol before the first launch\n",
            (int)st.toks[u].n, src + st.toks[u].pos);
        return 1;
    }
    return 0;
}

/* Tokens [b, e) at namespace scope: find the functions declared and defined.
 * A namespace's body is scanned as the scope it is in, with the end of
 * each scope around it kept in outer rather than in a recursion: a file
 * may nest namespaces deeper than the stack would allow. */
static void scan_scope(size_t b, size_t e)
{
    size_t stmt = b, *outer = NULL, nouter = 0, outer_cap = 0;
    for (size_t t = b;; t++) {
        if (t >= e) {
            if (nouter == 0) break;
            /* The namespace's '}': the scope around it goes on after it. */
            t = e;
            stmt = e + 1;
            e = outer[--nouter];
            continue;
        }
        if (tok_punct(t, ';')) {
            gpu_variable(stmt, t);
            st.decl_errors += dynamic_gpu_init(stmt, t);
            declaration(stmt, t, 0);
            stmt = t + 1;
        } else if (tok_punct(t, '(') || tok_punct(t, '[')) {
            t = tok_match(t);
        } else if (tok_punct(t, '{')) {
            size_t close = tok_match(t);
            /* No '}' closes it (one left out): the rest of the file would
             * be this body, its end past the last token, and its "calls"
             * whatever follows. Leave it and all after it as it is; the
             * compiler then says "expected '}' at end of input" and names
             * the '{' it could not match. */
            if (close == st.ntoks) break;
            int ns = (t >= 2 && st.toks[t - 1].type == T_STR && tok_is(t - 2, "extern"));
            for (size_t u = stmt; u < t; u++) ns |= tok_is(u, "namespace");
            size_t q = t;
            while (q > stmt && (tok_is(q - 1, "const") || tok_is(q - 1, "noexcept") || tok_is(q - 1, "override") ||
                                tok_is(q - 1, "final") || tok_is(q - 1, "volatile")))
                q--;
            if (ns) {
                outer = grow(outer, &outer_cap, nouter, sizeof(*outer));
                outer[nouter++] = e;
                e = close;
                stmt = t + 1;
                continue;
            }
            if (q > stmt && tok_punct(q - 1, ')')) {
                declaration(stmt, t, close);
                stmt = close + 1;
            }
            /* Otherwise a class body or an initializer: the statement goes
             * on to its ';'. */
            t = close;
        }
    }
    free(outer);
}

/* Order of the names of two functions (indices of st.fns). */
static int name_order(const void *a, const void *b)
{
    const token *x = &st.toks[st.fns[*(const size_t *)a].name], *y = &st.toks[st.fns[*(const size_t *)b].name];
    int c = memcmp(src + x->pos, src + y->pos, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The functions named as token t: st.by_name[*first, *first + count),
 * the count returned. */
static size_t fns_named(size_t t, size_t *first)
{
    if (st.nby_name != st.nfns) { /* a function found since it was made */
        free(st.by_name);
        st.by_name = malloc(st.nfns * sizeof(*st.by_name));
        if (!st.by_name) {
            perror("simt-rewrite");
            exit(2);
        }
        st.nby_name = st.nfns;
        for (size_t f = 0; f < st.nfns; f++) st.by_name[f] = f;
        qsort(st.by_name, st.nfns, sizeof(*st.by_name), name_order);
    }
    size_t lo = 0, hi = st.nfns;
    while (lo < hi) { /* the first name not below t's */
        size_t mid = lo + (hi - lo) / 2;
        const token *x = &st.toks[st.fns[st.by_name[mid]].name];
        int c = memcmp(src + x->pos, src + st.toks[t].pos, x->n < st.toks[t].n ? x->n : st.toks[t].n);
        if (c < 0 || (c == 0 && x->n < st.toks[t].n)) lo = mid + 1;
        else hi = mid;
    }
    size_t e = lo;
    while (e < st.nfns && same_name(st.fns[st.by_name[e]].name, t)) e++;
    *first = lo;
    return e - lo;
}

/* The spaces of every declaration of the name at token t, or 0. */
static int spaces_of(size_t t)
{
    int s = 0;
    size_t f, n = fns_named(t, &f);
    for (size_t k = f; k < f + n; k++) s |= st.fns[st.by_name[k]].space;
    return s;
}

/* Is every declaration of the name at t a constexpr one? */
static int all_constexpr(size_t t)
{
    size_t f, n = fns_named(t, &f);
    for (size_t k = f; k < f + n; k++)
        if (!st.fns[st.by_name[k]].cexpr) return 0;
    return n > 0;
}

static const char *space_word(int s)
{
    return s == SP_GLOBAL ? "__global__" : s == SP_DEVICE ? "__device__" : s == SP_BOTH ? "__host__ __device__" : "__host__";
}

/* Words after which name( is still a call, not a declaration of name. */
static int call_context_word(size_t t)
{
    static const char *const words[] = {"return", "case", "else", "do", "throw", "co_return", "co_yield", NULL};
    for (int w = 0; words[w]; w++)
        if (tok_is(t, words[w])) return 1;
    return 0;
}

/* Is the identifier at t declared inside [b, e) (a parameter, a local, a
 * lambda): a type name (or '*', '&' after one) stands before it there? */
static int tok_order(const void *a, const void *b)
{
    const token *x = &st.toks[*(const size_t *)a], *y = &st.toks[*(const size_t *)b];
    int c = memcmp(src + x->pos, src + y->pos, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static int declared_within(size_t t, size_t b, size_t e)
{
    if (!st.declared || st.declared_b != b || st.declared_e != e) { /* the names, once per function */
        free(st.declared);
        st.declared = malloc((e > b ? e - b : 1) * sizeof(*st.declared));
        if (!st.declared) {
            perror("simt-rewrite");
            exit(2);
        }
        st.ndeclared = 0;
        for (size_t u = b + 1; u < e; u++)
            if (st.toks[u].type == T_IDENT && st.toks[u - 1].type == T_IDENT && !call_context_word(u - 1))
                st.declared[st.ndeclared++] = u;
        qsort(st.declared, st.ndeclared, sizeof(*st.declared), tok_order);
        st.declared_b = b;
        st.declared_e = e;
    }
    return bsearch(&t, st.declared, st.ndeclared, sizeof(t), tok_order) != NULL;
}

/* The standard library in device code: nvcc (without
 * --expt-relaxed-constexpr, which the course does not pass) refuses these
 * host functions, constexpr or not, though a CPU runs them; the <cmath>
 * functions (std::sqrt, std::fmax, ...) and std::move are allowed and not
 * listed. At t: "std" "::" name; returns the length of the name's text to
 * report (from t + 2), or 0. */
static size_t refused_std_call(size_t t, size_t end)
{
    static const char *const names[] = {"min", "max", "minmax", "clamp", "swap", "exchange", "make_pair",
                                        "make_tuple", "get", "fill", "fill_n", "copy", "copy_n", "sort",
                                        "reverse", "accumulate", "iota", NULL};
    if (!tok_is(t, "std") || !tok_is(t + 1, "::") || t + 3 >= end || st.toks[t + 2].type != T_IDENT) return 0;
    if (t > 0 && (tok_is(t - 1, "::") || tok_punct(t - 1, '.') || tok_is(t - 1, "->"))) return 0;
    if (tok_is(t + 2, "numeric_limits") && tok_punct(t + 3, '<')) { /* std::numeric_limits<T>::member() */
        int depth = 0;
        for (size_t u = t + 3; u + 3 < end; u++) {
            if (tok_punct(u, '<')) depth++;
            if (tok_punct(u, '>') && --depth == 0)
                return tok_is(u + 1, "::") && st.toks[u + 2].type == T_IDENT && tok_punct(u + 3, '(')
                           ? st.toks[u + 2].pos + st.toks[u + 2].n - st.toks[t + 2].pos
                           : 0;
        }
        return 0;
    }
    for (int k = 0; names[k]; k++)
        if (tok_is(t + 2, names[k]) && (tok_punct(t + 3, '(') || tok_punct(t + 3, '<'))) return st.toks[t + 2].n;
    return 0;
}

/* The standard library's containers and other classes whose
 * constructors and destructors are host functions: an object of one in
 * device code (std::vector<float> v(n); or a temporary, std::string("x"))
 * is refused by nvcc, which names the constructor ("calling a __host__
 * function("std::vector<...>::vector(...)") from a __global__ function";
 * checked with CUDA 13). A pointer or a reference to one is not, nor is
 * std::array, std::pair or std::tuple, which nvcc refuses only where a
 * member function is called. At t: "std" "::" name; returns the length of
 * the name's text (from t + 2), or 0. */
static size_t refused_std_object(size_t t, size_t end)
{
    static const char *const names[] = {"vector", "string", "wstring", "map", "multimap", "unordered_map", "set",
                                        "multiset", "unordered_set", "list", "forward_list", "deque", "queue",
                                        "stack", "priority_queue", "unique_ptr", "shared_ptr", "function", "thread",
                                        "mutex", "stringstream", "ostringstream", "istringstream", "regex", NULL};
    if (!tok_is(t, "std") || !tok_is(t + 1, "::") || t + 3 >= end || st.toks[t + 2].type != T_IDENT) return 0;
    if (t > 0 && (tok_is(t - 1, "::") || tok_punct(t - 1, '.') || tok_is(t - 1, "->"))) return 0;
    int k = 0;
    while (names[k] && !tok_is(t + 2, names[k])) k++;
    if (!names[k]) return 0;
    size_t u = t + 3;
    if (tok_punct(u, '<')) { /* past the template arguments */
        int depth = 0;
        for (; u < end; u++) {
            if (tok_punct(u, '(') || tok_punct(u, '[')) u = tok_match(u);
            else if (tok_punct(u, '<')) depth++;
            else if (tok_punct(u, '>') && --depth == 0) break;
            else if (tok_punct(u, ';') || tok_punct(u, '{')) return 0;
        }
        u++;
    }
    if (u >= end) return 0;
    return st.toks[u].type == T_IDENT || tok_punct(u, '(') || tok_punct(u, '{') ? st.toks[t + 2].n : 0;
}

/* The host's streams in device code, at t: std::cout, std::cerr, std::clog
 * or std::cin, or the bare name where the file says using namespace std.
 * nvcc refuses them (#20096-D, "address of a host variable "std::cout"
 * cannot be directly taken in a device function", a warning -Werror
 * all-warnings makes an error); the emulator would print. Returns the
 * stream name's token, or 0. */
static size_t host_stream(size_t t)
{
    static const char *const names[] = {"cout", "cerr", "clog", "cin", NULL};
    int qualified = tok_is(t, "std") && tok_is(t + 1, "::") && t + 2 < st.ntoks;
    size_t name = qualified ? t + 2 : t;
    if (t > 0 && (tok_is(t - 1, "::") || tok_punct(t - 1, '.') || tok_is(t - 1, "->") ||
                  (!qualified && st.toks[t - 1].type == T_IDENT)))
        return 0;
    int k = 0;
    while (names[k] && !tok_is(name, names[k])) k++;
    if (!names[k]) return 0;
    if (qualified) return name;
    for (size_t u = 0; u + 2 < st.ntoks; u++) /* the bare name: only with using namespace std */
        if (tok_is(u, "using") && tok_is(u + 1, "namespace") && tok_is(u + 2, "std")) return name;
    return 0;
}

/* Is the GPU variable named at t (in host code, body from open) used
 * where nvcc allows it: an argument of a cuda*Symbol* call, inside sizeof,
 * decltype or alignof, or the operand of a unary '&'? */
static int symbol_use_allowed(size_t t, size_t open)
{
    if (tok_punct(t - 1, '&') && !(st.toks[t - 2].type == T_IDENT || st.toks[t - 2].type == T_NUM ||
                                   tok_punct(t - 2, ')') || tok_punct(t - 2, ']')))
        return 1;
    int depth = 0;
    for (size_t u = t - 1; u > open; u--) {
        if (tok_punct(u, ')') || tok_punct(u, ']')) depth++;
        else if (tok_punct(u, '[')) depth--;
        else if (tok_punct(u, '(')) {
            if (depth > 0) {
                depth--;
                continue;
            }
            if (st.toks[u - 1].type == T_IDENT) {
                const char *w = src + st.toks[u - 1].pos;
                int n = (int)st.toks[u - 1].n;
                char name[64];
                snprintf(name, sizeof name, "%.*s", n < 63 ? n : 63, w);
                if ((!strncmp(name, "cuda", 4) && strstr(name, "Symbol")) || !strcmp(name, "sizeof") ||
                    !strcmp(name, "decltype") || !strcmp(name, "alignof"))
                    return 1;
            }
        } else if (depth == 0 && (tok_punct(u, ';') || tok_punct(u, '{') || tok_punct(u, '}')))
            return 0;
    }
    return 0;
}

/* Is the variable named at t written there: assigned (v = x, v[i] += x,
 * an operator and its '=' side by side) or stepped (++v, v--)? */
static int written_at(size_t t)
{
    size_t u = t + 1;
    while (tok_punct(u, '[')) u = tok_match(u) + 1;
    return (tok_punct(u, '=') && !tok_punct(u + 1, '=')) ||
           (u + 1 < st.ntoks && st.toks[u].type == T_PUNCT && strchr("+-*/%&|^", src[st.toks[u].pos]) &&
            tok_punct(u + 1, '=') && st.toks[u + 1].pos == st.toks[u].pos + 1) ||
           (tok_punct(u, '+') && tok_punct(u + 1, '+')) || (tok_punct(u, '-') && tok_punct(u + 1, '-')) ||
           (tok_punct(t - 1, '+') && tok_punct(t - 2, '+')) || (tok_punct(t - 1, '-') && tok_punct(t - 2, '-'));
}

/* Host code reading or writing a __device__ or __constant__ variable at t
 * (nvcc: "cannot be directly read in a host function"; here the host and
 * the kernels share one copy, so it works). Returns 1 when reported. */
static int host_uses_gpu_variable(const fn_rec *f, size_t t)
{
    if (st.toks[t].type != T_IDENT || st.toks[t].arch) return 0;
    int v = 0;
    while (v < st.ngpu_vars && !same_name(st.gpu_vars[v].name, t)) v++;
    if (v == st.ngpu_vars) return 0;
    if (tok_is(t - 1, "::") || tok_is(t - 1, "->") || tok_punct(t - 1, '.') ||
        (st.toks[t - 1].type == T_IDENT && !call_context_word(t - 1)) || symbol_use_allowed(t, f->open) ||
        declared_within(t, f->name + 1, f->close))
        return 0;
    int write = written_at(t);
    const char *name = src + st.toks[t].pos;
    int n = (int)st.toks[t].n;
    say(line_of(st.toks[t].pos), "error: a %s variable \"%.*s\" cannot be directly %s in a host function\n",
        st.gpu_vars[v].space, n, name, write ? "written" : "read");
    say(line_of(st.toks[t].pos),
        "note: on a GPU the host's %.*s is a copy no kernel sees: use cudaMemcpyToSymbol(%.*s, &value, "
        "sizeof value) or cudaMemcpyFromSymbol(&value, %.*s, sizeof value)\n",
        n, name, n, name, n, name);
    return 1;
}

/* Device code writing a __constant__ variable at t (c = v, c[i] += v,
 * ++c): nvcc refuses it, a scalar in its front end ("expression must be a
 * modifiable lvalue") and an array's element in its back end (a warning,
 * "Cannot store to pointer that points to constant memory space", which
 * -Werror all-warnings makes an error), as constant memory is read-only to
 * kernels; here the kernels and the host share one copy, and the write
 * would work. Returns 1 when reported. */
static int device_writes_constant(const fn_rec *f, size_t t)
{
    if (st.toks[t].type != T_IDENT || st.toks[t].arch) return 0;
    int v = 0;
    while (v < st.ngpu_vars && !(same_name(st.gpu_vars[v].name, t) && !strcmp(st.gpu_vars[v].space, "__constant__")))
        v++;
    if (v == st.ngpu_vars) return 0;
    if (tok_is(t - 1, "::") || tok_is(t - 1, "->") || tok_punct(t - 1, '.') || st.toks[t - 1].type == T_IDENT ||
        declared_within(t, f->name + 1, f->close))
        return 0;
    if (!written_at(t)) return 0;
    int n = (int)st.toks[t].n, line = line_of(st.toks[t].pos);
    /* An element is refused later, by nvcc's back end, as a warning that
     * the course's -Werror all-warnings makes an error. */
    if (tok_punct(t + 1, '['))
        say(line,
            "error: cannot store to pointer that points to constant memory space (an element of the __constant__ array "
            "\"%.*s\", written in %s function \"%.*s\")\n",
            n, src + st.toks[t].pos, space_word(f->space), (int)st.toks[f->name].n, src + st.toks[f->name].pos);
    else
        say(line,
            "error: expression must be a modifiable lvalue (the __constant__ variable \"%.*s\", written in %s function "
            "\"%.*s\")\n",
            n, src + st.toks[t].pos, space_word(f->space), (int)st.toks[f->name].n, src + st.toks[f->name].pos);
    say(line, "note: constant memory is read-only to kernels: the host sets it with cudaMemcpyToSymbol before the "
              "launch; a kernel writes its results to a __device__ variable or to global memory\n");
    return 1;
}

/* Is t the name of a function template followed by its template arguments
 * and a call, as in load_tile<BM, BK>(...)? Only a name this file declares
 * as a function template counts, so a comparison a < b > (c) is left alone. */
static int template_call(size_t t)
{
    if (!tok_punct(t + 1, '<')) return 0;
    if (tok_punct(t + 2, '<') && tok_punct(t + 3, '<') && st.toks[t + 3].pos == st.toks[t + 1].pos + 2)
        return 0; /* name<<<...>>>: a launch */
    int templ = 0;
    size_t f, n = fns_named(t, &f);
    for (size_t k = f; k < f + n; k++) templ |= st.fns[st.by_name[k]].templ;
    if (!templ) return 0;
    int depth = 0;
    for (size_t u = t + 1; u < st.ntoks; u++) {
        if (tok_punct(u, '(') || tok_punct(u, '[') || tok_punct(u, '{')) {
            u = tok_match(u);
            continue;
        }
        if (tok_punct(u, ';') || tok_punct(u, ')') || tok_punct(u, ']') || tok_punct(u, '}')) return 0;
        if (tok_punct(u, '<')) depth++;
        if (tok_punct(u, '>') && --depth == 0) return tok_punct(u + 1, '(');
    }
    return 0;
}

/* The C library's functions that nvcc has only on the host (checked with
 * CUDA 13: "calling a __host__ function("rand") from a __global__ function
 * is not allowed"); printf, malloc, free, memcpy, memset, strlen, abs and
 * clock exist in device code too. */
static int host_only_libc(size_t t)
{
    static const char *const names[] = {
        "abort", "atof", "atoi", "calloc", "drand48", "exit", "fclose", "fflush", "fgets", "fopen", "fprintf",
        "fputs", "fread", "fscanf", "fwrite", "getenv", "memcmp", "perror", "putchar", "puts", "rand", "rand_r",
        "realloc", "scanf", "sleep", "snprintf", "sprintf", "srand", "strcmp", "strtod", "strtol", "system",
        "time", "usleep", NULL};
    for (int k = 0; names[k]; k++)
        if (tok_is(t, names[k])) return 1;
    return 0;
}

/* CUDA's built-ins that nvcc declares __device__ only, and that the
 * emulator defines for the host as well (its kernels are host code): without
 * this table a host function, a CPU reference say, that calls one builds
 * here and not under nvcc. Checked with CUDA 13 by calling each from a host
 * function ("calling a __device__ function("__expf") from a __host__
 * function("main") is not allowed"); the agreement corpus
 * (tests/agreement/refuse_*_from_host.cu) calls every one on a line of its
 * own, so a name nvcc allows on the host fails that test. __hadd is left out:
 * nvcc's __half __hadd is a host function too (only the int one is not). Each
 * group carries what host code writes instead. */
static const struct {
    const char *instead;
    const char *names;
} device_builtins[] = {
    {"it works on a kernel's threads (or the GPU's clock and memory order), which host code has none of: do that step "
     "in a kernel",
     " __syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp __threadfence"
     " __threadfence_block __threadfence_system __nanosleep __trap clock64 __activemask __ballot_sync __any_sync"
     " __all_sync __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __match_any_sync __match_all_sync"
     " __reduce_add_sync __reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync"
     " __pipeline_memcpy_async __pipeline_commit __pipeline_wait_prior __cvta_generic_to_shared "},
    {"host code updates the value with a plain +=, min or max (std::atomic where host threads share it)",
     " atomicAdd atomicSub atomicExch atomicMin atomicMax atomicInc atomicDec atomicCAS atomicAnd atomicOr atomicXor"
     " atomicAdd_block atomicAdd_system atomicCAS_block atomicExch_block atomicMax_block atomicMin_block "},
    {"host code reads or writes *p itself", " __ldg __ldcg __ldca __ldcs __ldlu __ldcv __stwb __stcg __stcs __stwt "},
    {"host code calls the <cmath> function it approximates: expf for __expf, sinf for __sinf, powf for __powf, x / y "
     "for __fdividef, fminf(fmaxf(x, 0.0f), 1.0f) for __saturatef",
     " __expf __exp10f __logf __log2f __log10f __sinf __cosf __tanf __sincosf __powf __fdividef __saturatef "},
    {"host code writes the plain operator, fmaf or sqrtf (which round to nearest), a C cast (which rounds toward "
     "zero) after rintf, floorf or ceilf for the other roundings, and memcpy in place of __int_as_float and its kin",
     " __fadd_rn __fadd_rz __fadd_ru __fadd_rd __fsub_rn __fsub_rz __fsub_ru __fsub_rd __fmul_rn __fmul_rz __fmul_ru"
     " __fmul_rd __fdiv_rn __fdiv_rz __fdiv_ru __fdiv_rd __fmaf_rn __fmaf_rz __fmaf_ru __fmaf_rd __frcp_rn __frcp_rz"
     " __frcp_ru __frcp_rd __fsqrt_rn __fsqrt_rz __fsqrt_ru __fsqrt_rd __frsqrt_rn __dadd_rn __dmul_rn __fma_rn"
     " __float2int_rn __float2int_rz __float2int_ru __float2int_rd __float2uint_rn __float2uint_rz __float2uint_ru"
     " __float2uint_rd __float2ll_rn __float2ll_rz __float2ll_ru __float2ll_rd __float2ull_rn __float2ull_rz"
     " __float2ull_ru __float2ull_rd __double2float_rn __double2float_rz __double2float_ru __double2float_rd"
     " __double2int_rn __double2int_rz __double2int_ru __double2int_rd __double2uint_rn __double2uint_rz"
     " __double2uint_ru __double2uint_rd __double2ll_rn __double2ll_rz __double2ll_ru __double2ll_rd"
     " __double2ull_rn __double2ull_rz __double2ull_ru __double2ull_rd __int2float_rn __int2float_rz __int2float_ru"
     " __int2float_rd __uint2float_rn __uint2float_rz __uint2float_ru __uint2float_rd __ll2float_rn __ll2float_rz"
     " __ll2float_ru __ll2float_rd __ull2float_rn __ull2float_rz __ull2float_ru __ull2float_rd __int2double_rn"
     " __uint2double_rn __ll2double_rn __ull2double_rn __int_as_float __float_as_int __uint_as_float __float_as_uint"
     " __double_as_longlong __longlong_as_double "},
    {"host code has GCC's __builtin_popcount, __builtin_clz and ffs, or shifts and masks on a wider type",
     " __popc __popcll __clz __clzll __ffs __ffsll __brev __byte_perm __funnelshift_l __funnelshift_r"
     " __funnelshift_lc __funnelshift_rc __mulhi __umulhi __mul24 __umul24 __sad __usad __rhadd __uhadd __urhadd"
     " __dp4a __dp2a_lo __dp2a_hi "},
    {"host code converts to float (__half2float, __bfloat162float), calls the <cmath> function (fmaf for __hfma, "
     "rintf for __half2int_rn) and converts back",
     " hexp hexp2 hexp10 hlog hlog2 hlog10 hsin hcos htanh hsqrt hrsqrt hrcp hceil hfloor hrint htrunc h2exp h2exp2"
     " h2exp10 h2log h2log2 h2log10 h2sin h2cos h2tanh h2sqrt h2rsqrt h2rcp h2ceil h2floor h2rint h2trunc __hfma"
     " __hfma2 __half2int_rn __half2int_rd __half2int_ru __bfloat162int_rn "},
};

/* If the name at t is one of device_builtins, what host code writes
 * instead; else NULL. */
static const char *device_builtin(size_t t)
{
    const char *w = src + st.toks[t].pos;
    size_t n = st.toks[t].n;
    if (n < 4 || n > 40) return NULL;
    char key[48];
    key[0] = ' ';
    memcpy(key + 1, w, n);
    key[n + 1] = ' ';
    key[n + 2] = 0;
    for (size_t g = 0; g < sizeof device_builtins / sizeof device_builtins[0]; g++)
        if (strstr(device_builtins[g].names, key)) return device_builtins[g].instead;
    return NULL;
}

/* The CUDA runtime's functions that a kernel cannot call, each checked with
 * CUDA 13 in a kernel: nvcc refuses the host-only ones (host: "calling a
 * __host__ function("cudaMemcpy") from a __global__ function"), and ptxas
 * the device runtime's ("Unresolved extern function
 * '__cudaCDP2GetLastError'": they need relocatable device code, -rdc=true,
 * which the course does not use). cudaMalloc, cudaGetDevice,
 * cudaDeviceGetAttribute, cudaFuncGetAttributes and the occupancy calls
 * build in a kernel and are not listed. The emulator would run every one
 * of them in a kernel. Returns 1 for a host-only one, 2 for one of the
 * device runtime's, else 0. */
static int runtime_call_in_kernel(size_t t)
{
    static const char *const host[] = {"cudaMemcpy", "cudaMemset", "cudaDeviceSynchronize", "cudaStreamSynchronize",
                                       "cudaMallocManaged", "cudaSetDevice", "cudaLaunchKernel", "cudaMemcpy2D",
                                       "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaDeviceReset",
                                       "cudaMallocHost", "cudaFreeHost", "cudaStreamCreate", "cudaEventCreate",
                                       "cudaEventSynchronize", "cudaEventElapsedTime", NULL};
    static const char *const cdp[] = {"cudaGetLastError", "cudaPeekAtLastError", "cudaFree", "cudaMemcpyAsync",
                                      "cudaMemsetAsync", "cudaGetErrorString", "cudaGetErrorName", "cudaEventRecord",
                                      NULL};
    for (int k = 0; host[k]; k++)
        if (tok_is(t, host[k])) return 1;
    for (int k = 0; cdp[k]; k++)
        if (tok_is(t, cdp[k])) return 2;
    return 0;
}

/* The '{' of the body of the class this file defines (struct or class,
 * the name, then past final and a base list the body) named as token
 * name, its name's token in *cls; or 0. */
static size_t class_body(size_t name, size_t *cls)
{
    for (size_t c = 1; c + 1 < st.ntoks; c++) {
        if (!(tok_is(c - 1, "struct") || tok_is(c - 1, "class")) || !same_name(c, name)) continue;
        size_t open = c + 1;
        while (open < st.ntoks && !tok_punct(open, '{') && !tok_punct(open, ';') && !tok_punct(open, '(')) open++;
        if (open >= st.ntoks || !tok_punct(open, '{')) continue; /* a declaration, not the definition */
        *cls = c;
        return open;
    }
    return 0;
}

/* A static __shared__ variable at t (the __shared__) in device code whose
 * class, defined in this file, declares a default constructor of its own
 * that is not constexpr (S() : a(1) {}, or S(); defined elsewhere, or a
 * __device__ one): it would have to run when the block starts, and nvcc
 * refuses it (#20054-D, "dynamic initialization is not supported for a
 * function-scope static __shared__ variable", a warning that -Werror
 * all-warnings makes an error). Here it runs once per fiber thread and
 * needs a guard variable the threads race on. = default, and default
 * member initializers, leave the constructor implicit and are fine.
 * Returns 1 when reported. */
static int shared_with_constructor(const fn_rec *f, size_t t)
{
    size_t u = t + 1;
    for (;; u++) {
        if (tok_is(u, "static") || tok_is(u, "const") || tok_is(u, "volatile")) continue;
        if ((tok_is(u, "alignas") || tok_is(u, "__align__")) && tok_punct(u + 1, '(')) {
            u = tok_match(u + 1);
            continue;
        }
        break;
    }
    if (u >= f->close || st.toks[u].type != T_IDENT || tok_is(u + 1, "::")) return 0;
    size_t c, open = class_body(u, &c);
    if (!open) return 0;
    size_t close = tok_match(open), stmt = open + 1;
    for (size_t w = open + 1; w < close; w++) {
        if (tok_punct(w, ';') || tok_punct(w, '}') || (tok_punct(w, ':') && !tok_is(w, "::"))) {
            stmt = w + 1;
            continue;
        }
        if (tok_punct(w, '{')) {
            w = tok_match(w);
            stmt = w + 1;
            continue;
        }
        if (!(same_name(w, c) && tok_punct(w + 1, '(') && tok_punct(w + 2, ')') && !tok_punct(w - 1, '~'))) continue;
        int cexpr = 0;
        for (size_t v = stmt; v < w; v++) cexpr |= tok_is(v, "constexpr") || is_macro(v, 1) || looks_like_macro(v);
        if (cexpr || tok_punct(w + 3, '=')) return 0; /* constexpr, = default or = delete */
        int line = line_of(st.toks[t].pos);
        say(line,
            "error: dynamic initialization is not supported for a function-scope static __shared__ variable within a "
            "__device__/__global__ function (its class %.*s has a default constructor of its own; nvcc warns, "
            "#20054-D, and -Werror all-warnings makes it an error)\n",
            (int)st.toks[c].n, src + st.toks[c].pos);
        say(line,
            "note: shared memory starts undefined in every block, and no constructor runs on it: drop %.*s(), or write "
            "it = default (a default member initializer does not count either), and set the fields from the threads, "
            "then __syncthreads()\n",
            (int)st.toks[c].n, src + st.toks[c].pos);
        return 1;
    }
    return 0;
}

/* Does the class whose body opens at token open (its name at cls) declare
 * a member function named as token m, and every such declaration unmarked
 * (a host function to nvcc)? Returns 1 for host only, 0 otherwise (none,
 * or one marked __device__). Only the class's own body is read, not its
 * bases. */
static int host_only_method(size_t cls, size_t open, size_t m)
{
    size_t close = tok_match(open);
    int found = 0;
    size_t stmt = open + 1;
    for (size_t u = open + 1; u < close; u++) {
        if (tok_punct(u, ';') || tok_punct(u, '}') || (tok_punct(u, ':') && !tok_is(u, "::"))) {
            stmt = u + 1;
            continue;
        }
        if (tok_punct(u, '{')) { /* a body: a member function's, or a nested class's */
            u = tok_match(u);
            stmt = u + 1;
            continue;
        }
        if (tok_punct(u, '(') && same_name(u - 1, m) && !same_name(u - 1, cls) && !tok_is(u - 2, "operator") &&
            !tok_punct(u - 2, '.') && !tok_is(u - 2, "->")) {
            for (size_t w = stmt; w < u - 1; w++)
                if (tok_is(w, "__device__") || tok_is(w, "__global__") || is_macro(w, 1) || looks_like_macro(w))
                    return 0;
            found = 1;
        }
        if (tok_punct(u, '(') || tok_punct(u, '[')) u = tok_match(u);
    }
    return found;
}

/* A member call obj.m(...) or obj->m(...) at m, in device code (or a
 * __host__ __device__ function, compiled for the GPU too): where obj
 * is declared in function f (a parameter or a local, before the call) as
 * an object of, or a pointer or reference to, a class this file defines,
 * and that class declares m without __device__, nvcc refuses the call
 * ("calling a __host__ function("H::get") from a __global__ function"); the
 * emulator would run it. The class is found only where it is sure: a
 * class name (or a template-id of one) right before obj's name, past
 * const, '*' and '&'. Returns 1 when reported. */
static int host_method_call(const fn_rec *f, size_t m)
{
    if (!tok_punct(m + 1, '(') || !(tok_punct(m - 1, '.') || tok_is(m - 1, "->")) || m < 3 ||
        st.toks[m - 2].type != T_IDENT || tok_punct(m - 3, '.') || tok_is(m - 3, "->") || tok_is(m - 3, "::"))
        return 0;
    size_t obj = m - 2, type = 0;
    for (size_t u = f->name + 2; u < obj && !type; u++) { /* its declaration: the parameters, then the body */
        if (!same_name(u, obj) || tok_punct(u - 1, '.') || tok_is(u - 1, "->")) continue;
        size_t w = u - 1;
        while (w > f->name && (tok_punct(w, '*') || tok_punct(w, '&') || tok_is(w, "const") || tok_is(w, "__restrict__")))
            w--;
        if (tok_punct(w, '>')) { /* Tile<4> t: back to the template's name */
            int depth = 0;
            for (; w > f->name; w--) {
                if (tok_punct(w, '>')) depth++;
                if (tok_punct(w, '<') && --depth == 0) break;
            }
            w--;
        }
        if (st.toks[w].type == T_IDENT && !tok_is(w, "return")) type = w;
    }
    if (!type) return 0;
    size_t c, open = class_body(type, &c);
    if (open) {
        if (!host_only_method(c, open, m)) return 0;
        int line = line_of(st.toks[m].pos);
        say(line, "error: calling a __host__ function(\"%.*s::%.*s\") from a %s function(\"%.*s\") is not allowed\n",
            (int)st.toks[c].n, src + st.toks[c].pos, (int)st.toks[m].n, src + st.toks[m].pos, space_word(f->space),
            (int)st.toks[f->name].n, src + st.toks[f->name].pos);
        say(line,
            "note: a member function without __device__ is host code to nvcc%s: mark %.*s::%.*s __host__ __device__ "
            "(or __device__)\n",
            f->space == SP_BOTH ? ", which compiles a __host__ __device__ function for the GPU too (a warning, "
                                  "#20014-D, that -Werror all-warnings makes an error)"
                                : "",
            (int)st.toks[c].n, src + st.toks[c].pos, (int)st.toks[m].n, src + st.toks[m].pos);
        return 1;
    }
    return 0;
}

/* The calls in function f's body that nvcc would refuse. */
static int check_calls(const fn_rec *f)
{
    int errors = 0;
    int caller = f->space;
    const char *fname = src + st.toks[f->name].pos;
    int fn = (int)st.toks[f->name].n;
    for (size_t t = f->open + 1; t < f->close; t++) {
        if (caller == SP_HOST && (tok_is(t, "__device__") || tok_is(t, "__host__"))) {
            /* A lambda marked for the device inside host code: skip its body. */
            while (t < f->close && !tok_punct(t, '{')) t++;
            t = tok_match(t);
            continue;
        }
        if ((caller == SP_HOST || caller == SP_BOTH) && !st.toks[t].arch && tok_is(t, "__shared__") &&
            !tok_is(t - 1, "extern")) {
            say(line_of(st.toks[t].pos),
                "error: a static \"__shared__\" variable declaration is not allowed inside a host function body (%s "
                "function \"%.*s\")\n",
                space_word(caller), fn, fname);
            say(line_of(st.toks[t].pos),
                "note: shared memory belongs to a block of a running kernel: declare the array in the kernel, or in a "
                "__device__ function it calls%s\n",
                caller == SP_BOTH ? " (nvcc compiles a __host__ __device__ function for the host too; #ifdef "
                                    "__CUDA_ARCH__ keeps a declaration from it)"
                                  : "");
            errors++;
            continue;
        }
        if ((caller == SP_DEVICE || caller == SP_GLOBAL) && !st.toks[t].arch && tok_is(t, "__shared__") &&
            !tok_is(t - 1, "extern") && shared_with_constructor(f, t)) {
            errors++;
            continue;
        }
        size_t stream = (caller == SP_DEVICE || caller == SP_GLOBAL) && !st.toks[t].arch ? host_stream(t) : 0;
        if (stream) {
            int line = line_of(st.toks[t].pos), sn = (int)st.toks[stream].n;
            const char *sname = src + st.toks[stream].pos;
            say(line,
                "error: address of a host variable \"std::%.*s\" cannot be directly taken in a device function (%s "
                "function \"%.*s\")\n",
                sn, sname, space_word(caller), fn, fname);
            say(line,
                "note: std::%.*s is the host's stream: a kernel prints with printf (<cstdio>), which nvcc has in "
                "device code\n",
                sn, sname);
            errors++;
            t = stream;
            continue;
        }
        if ((caller == SP_DEVICE || caller == SP_GLOBAL) && device_writes_constant(f, t)) {
            errors++;
            continue;
        }
        if (caller == SP_HOST && host_uses_gpu_variable(f, t)) {
            errors++;
            continue;
        }
        size_t objn = caller != SP_HOST && !st.toks[t].arch ? refused_std_object(t, f->close) : 0;
        if (objn) {
            const char *what = src + st.toks[t + 2].pos;
            say(line_of(st.toks[t].pos),
                "error: calling a __host__ function(\"std::%.*s::%.*s\") from a %s function(\"%.*s\") is not allowed\n",
                (int)objn, what, (int)objn, what, space_word(caller), fn, fname);
            say(line_of(st.toks[t].pos),
                "note: std::%.*s's constructor and destructor are host code, and its memory the host's heap: in device "
                "code use a fixed-size array (float v[8]), shared memory, or a buffer the host allocates and passes "
                "in\n",
                (int)objn, what);
            errors++;
            t += 2;
            continue;
        }
        size_t stdn = caller != SP_HOST && !st.toks[t].arch ? refused_std_call(t, f->close) : 0;
        if (stdn) {
            const char *what = src + st.toks[t + 2].pos;
            say(line_of(st.toks[t].pos),
                "error: calling a __host__ function(\"std::%.*s\") from a %s function(\"%.*s\") is not allowed\n",
                (int)stdn, what, space_word(caller), fn, fname);
            say(line_of(st.toks[t].pos), "note: nvcc refuses the C++ standard library in device code, but for the "
                                         "<cmath> functions (std::sqrt, std::fmax, ...): use min, max, fminf or fmaxf, "
                                         "INFINITY or FLT_MAX (<cfloat>), or a __device__ helper of your own\n");
            errors++;
            t += 2;
            continue;
        }
        if ((caller == SP_DEVICE || caller == SP_GLOBAL) && !st.toks[t].arch && (tok_is(t, "throw") || tok_is(t, "try"))) {
            say(line_of(st.toks[t].pos),
                "error: device code does not support exception handling (%.*s in %s function \"%.*s\")\n",
                (int)st.toks[t].n, src + st.toks[t].pos, space_word(caller), fn, fname);
            say(line_of(st.toks[t].pos), "note: report a bad input from a kernel through a flag in device memory that "
                                         "the host reads after the launch, or stop it with __trap()\n");
            errors++;
            continue;
        }
        if (st.toks[t].type != T_IDENT || st.toks[t].arch || !(tok_punct(t + 1, '(') || template_call(t))) continue;
        if ((caller == SP_DEVICE || caller == SP_GLOBAL || caller == SP_BOTH) && host_method_call(f, t)) {
            errors++;
            continue;
        }
        size_t p = t - 1;
        if (tok_is(p, "::") || tok_is(p, "->") || tok_punct(p, '.') || tok_punct(p, '>') || tok_punct(p, '~') ||
            (st.toks[p].type == T_IDENT && !call_context_word(p)))
            continue;
        int callee = spaces_of(t);
        const char *instead = (caller == SP_HOST || caller == SP_BOTH) && !callee && tok_punct(t + 1, '(') &&
                                      (!f->templ || tok_punct(t + 2, ')'))
                                  ? device_builtin(t)
                                  : NULL;
        if (instead && !declared_within(t, f->name + 1, f->close)) {
            /* In a template only a call without arguments: nvcc checks a
             * call whose arguments may depend on the template's parameters
             * per instantiation, and then lets it pass. */
            const char *bname = src + st.toks[t].pos;
            int bn = (int)st.toks[t].n;
            say(line_of(st.toks[t].pos),
                "error: calling a __device__ function(\"%.*s\") from a %s function(\"%.*s\") is not allowed\n", bn,
                bname, space_word(caller), fn, fname);
            if (caller == SP_HOST)
                say(line_of(st.toks[t].pos), "note: %.*s is a GPU built-in, which nvcc has only in device code: %s\n",
                    bn, bname, instead);
            else
                say(line_of(st.toks[t].pos),
                    "note: nvcc compiles %.*s for the host too, where the GPU built-in %.*s does not exist: make %.*s "
                    "__device__ only, or put the call under #ifdef __CUDA_ARCH__ with host code in its #else (%s)\n",
                    fn, fname, bn, bname, fn, fname, instead);
            errors++;
            continue;
        }
        int runtime = (caller == SP_DEVICE || caller == SP_GLOBAL) && !callee && tok_punct(t + 1, '(') &&
                              !declared_within(t, f->name + 1, f->close)
                          ? runtime_call_in_kernel(t)
                          : 0;
        if (runtime) {
            int line = line_of(st.toks[t].pos), rn = (int)st.toks[t].n;
            const char *rname = src + st.toks[t].pos;
            if (runtime == 1)
                say(line, "error: calling a __host__ function(\"%.*s\") from a %s function(\"%.*s\") is not allowed\n",
                    rn, rname, space_word(caller), fn, fname);
            else
                say(line,
                    "error: %.*s in a %s function(\"%.*s\") needs relocatable device code (nvcc -rdc=true), which the "
                    "course does not use: ptxas stops at it (\"Unresolved extern function '__cudaCDP2%.*s'\")\n",
                    rn, rname, space_word(caller), fn, fname, rn - 4, rname + 4);
            say(line, "note: the CUDA runtime is the host's: call it from host code before or after the launch "
                      "(cudaGetLastError after it, for the launch's errors); a kernel reports a problem through a flag "
                      "in device memory\n");
            errors++;
            continue;
        }
        if ((caller == SP_DEVICE || caller == SP_GLOBAL) && !callee && tok_punct(t + 1, '(') && host_only_libc(t) &&
            !declared_within(t, f->name + 1, f->close)) {
            say(line_of(st.toks[t].pos),
                "error: calling a __host__ function(\"%.*s\") from a %s function(\"%.*s\") is not allowed\n",
                (int)st.toks[t].n, src + st.toks[t].pos, space_word(caller), fn, fname);
            say(line_of(st.toks[t].pos),
                "note: the C library's files, rand, time, exit and string parsing exist only on the host (printf, "
                "malloc, free, memcpy and memset exist in device code too): do that work in host code, and for random "
                "numbers in a kernel use a counter-based generator keyed by the thread's index (common/rng.h's "
                "Philox)\n");
            errors++;
            continue;
        }
        if (callee != SP_HOST && callee != SP_DEVICE && callee != SP_GLOBAL) continue;
        if (declared_within(t, f->name + 1, f->close)) continue;
        const char *cname = src + st.toks[t].pos;
        int cn = (int)st.toks[t].n;
        if (callee == SP_GLOBAL) {
            say(line_of(st.toks[t].pos),
                "error: a __global__ function call must be configured: launch %.*s with %.*s<<<grid, block>>>(...)\n",
                cn, cname, cn, cname);
            errors++;
        } else if (caller == SP_HOST && callee == SP_DEVICE) {
            say(line_of(st.toks[t].pos),
                "error: calling a __device__ function(\"%.*s\") from a __host__ function(\"%.*s\") is not allowed\n",
                cn, cname, fn, fname);
            say(line_of(st.toks[t].pos), "note: a __device__ function runs only on the GPU: call it from a kernel, or "
                                         "mark it __host__ __device__\n");
            errors++;
        } else if (caller == SP_BOTH && callee == SP_DEVICE) {
            say(line_of(st.toks[t].pos),
                "error: calling a __device__ function(\"%.*s\") from a __host__ __device__ function(\"%.*s\") is not "
                "allowed\n",
                cn, cname, fn, fname);
            say(line_of(st.toks[t].pos),
                "note: nvcc compiles %.*s for the host too, where %.*s does not exist: mark %.*s __host__ __device__, "
                "or make %.*s __device__ only\n",
                fn, fname, cn, cname, cn, cname, fn, fname);
            errors++;
        } else if (caller == SP_BOTH && callee == SP_HOST) {
            say(line_of(st.toks[t].pos),
                "error: calling a %s__host__ function(\"%.*s\") from a __host__ __device__ function(\"%.*s\") is not "
                "allowed\n",
                all_constexpr(t) ? "constexpr " : "", cn, cname, fn, fname);
            say(line_of(st.toks[t].pos),
                "note: nvcc compiles %.*s for the GPU too, where %.*s does not exist (a warning, #20011-D, which the "
                "course's -Werror all-warnings makes an error): mark %.*s __host__ __device__, or put the call under "
                "#ifndef __CUDA_ARCH__\n",
                fn, fname, cn, cname, cn, cname);
            errors++;
        } else if (caller != SP_HOST && callee == SP_HOST) {
            say(line_of(st.toks[t].pos),
                "error: calling a %s__host__ function(\"%.*s\") from a %s function(\"%.*s\") is not allowed\n",
                all_constexpr(t) ? "constexpr " : "", cn, cname, space_word(caller), fn, fname);
            if (all_constexpr(t))
                say(line_of(st.toks[t].pos),
                    "note: constexpr alone leaves %.*s a host function to nvcc, even in a constant expression (the "
                    "course does not pass --expt-relaxed-constexpr): mark it __host__ __device__\n",
                    cn, cname);
            else
                say(line_of(st.toks[t].pos),
                    "note: nvcc compiles %.*s for the GPU, where only __device__ functions exist: mark %.*s __device__ "
                    "(or __host__ __device__ to call it from both sides)\n",
                    fn, fname, cn, cname);
            errors++;
        }
    }
    return errors;
}

/* #line n "path": the path as a string literal, whose escapes the compiler
 * reads (a name may hold a quote, a backslash or even a line break). */
static void put_line_directive(buf *out, int n)
{
    char num[32];
    snprintf(num, sizeof num, "#line %d \"", n);
    puts_(out, num);
    for (const char *p = path; *p; p++) {
        if (*p == '"' || *p == '\\') puts_(out, "\\");
        if (*p == '\n') puts_(out, "\\n");
        else put(out, p, 1);
    }
    puts_(out, "\"\n");
}

/* Text the rewrite puts at src position pos (takes text, malloc'd). */
static void add_insert(size_t pos, char *text)
{
    st.inserts = grow(st.inserts, &st.inserts_cap, st.ninserts, sizeof(*st.inserts));
    st.inserts[st.ninserts] = (insertion){pos, text, st.ninserts};
    st.ninserts++;
}

static int insert_order(const void *a, const void *b)
{
    const insertion *x = a, *y = b;
    if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void host_code_marks(void)
{
    for (size_t f = 0; f < st.nfns; f++) {
        const fn_rec *r = &st.fns[f];
        if (!r->close || r->space != SP_HOST || st.toks[r->start].arch || st.toks[r->close].arch) continue;
        /* On a line of its own, before the line the function starts on,
         * and a #line after it, so that the compiler's messages keep their
         * lines and columns; before the first token where the line holds
         * more (a column shifts there). */
        size_t b = st.toks[r->start].pos;
        while (b > 0 && (src[b - 1] == ' ' || src[b - 1] == '\t')) b--;
        char *text;
        if (b == 0 || src[b - 1] == '\n') {
            buf t = {0};
            puts_(&t, "SIMT_HOST_CODE_BEGIN\n");
            put_line_directive(&t, line_of(b));
            text = t.s;
        } else {
            b = st.toks[r->start].pos;
            text = strdup("SIMT_HOST_CODE_BEGIN ");
        }
        add_insert(b, text);
        add_insert(st.toks[r->close].pos + 1, strdup(" SIMT_HOST_CODE_END"));
    }
}

/* Parameters of the list whose '(' is token open: how many, and how many
 * have a default (a top-level '='). */
static void count_params(size_t open, int *n, int *defaults)
{
    size_t close = tok_match(open);
    int depth = 0, any = 0;
    *n = *defaults = 0;
    for (size_t u = open + 1; u < close; u++) {
        if (tok_punct(u, '.')) { /* a parameter pack (Args... args): any count */
            *n = -1;
            return;
        }
        if (tok_punct(u, '(') || tok_punct(u, '[') || tok_punct(u, '{') || tok_punct(u, '<')) depth++;
        if (tok_punct(u, ')') || tok_punct(u, ']') || tok_punct(u, '}') || tok_punct(u, '>')) depth--;
        if (depth) continue;
        any |= !tok_is(u, "void");
        *n += tok_punct(u, ',');
        *defaults += tok_punct(u, '=');
    }
    *n += any;
}

/* Arguments of a launch whose <<< starts at src[i]: the top-level commas
 * of its (...) plus one, or 0 for none; -1 when it cannot be read, when a
 * name in capitals could be a macro that expands to several
 * (#define ARGS p, n; or __VA_ARGS__: the compiler counts after the
 * preprocessor, this scanner before), or when a '<' outside brackets may
 * open template arguments, whose commas are no argument's end. */
static int launch_args(size_t i)
{
    size_t cfg_end, start, end;
    if (launch_parts(i, &cfg_end, &start, &end)) return -1;
    int n = 0, depth = 0, any = 0;
    for (size_t k = start; k < end; k++) {
        size_t l = skip_lexeme(k);
        if (l) {
            k += l - 1;
            any = 1;
            continue;
        }
        if (is_ident(src[k]) && !is_ident(src[k - 1]) && !isdigit((unsigned char)src[k])) {
            size_t e = k, upper = 0, lower = 0;
            for (; e < end && is_ident(src[e]); e++) upper += isupper((unsigned char)src[e]) != 0,
                                                     lower += islower((unsigned char)src[e]) != 0;
            if (upper && !lower) return -1;
            k = e - 1;
            any = 1;
            continue;
        }
        if (strchr("([{", src[k])) depth++;
        if (strchr(")]}", src[k])) depth--;
        if (!depth && src[k] == '<') return -1;
        if (!depth && src[k] == ',') n++;
        any |= !isspace((unsigned char)src[k]);
    }
    return any ? n + 1 : 0;
}

/* Do the parameter lists whose '(' are tokens a and b read the same? */
static int same_params(size_t a, size_t b)
{
    size_t ea = tok_match(a), eb = tok_match(b);
    if (ea - a != eb - b) return 0;
    for (size_t u = 0; u <= ea - a; u++)
        if (st.toks[a + u].n != st.toks[b + u].n ||
            memcmp(src + st.toks[a + u].pos, src + st.toks[b + u].pos, st.toks[a + u].n) != 0)
            return 0;
    return 1;
}

/* Kernel templates declared in one file (a header) and launched in
 * another with their template arguments left to deduce: simt-rewrite reads
 * the .cu file and its headers in a first pass, then writes each in a
 * second. The first pass notes each such launch's kernel name (wanted) and
 * each kernel template a header declares, with whether a deduction helper
 * can be written for it (ok); the second adds the helper after the
 * header's declaration, and the launch takes the deduced form (see
 * header_kernel_launch). Kept across files, unlike st. */
static struct {
    char **wanted;
    size_t nwanted, wanted_cap;
    struct {
        size_t file; /* the header's index in hdrs.h */
        char *name;
        int ok;
    } *kernels;
    size_t nkernels, kernels_cap;
    int first;   /* in the first pass of a rewrite with headers */
    size_t file; /* the file being read */
} across;

static int name_listed(char *const *list, size_t n, size_t t)
{
    for (size_t k = 0; k < n; k++)
        if (strlen(list[k]) == st.toks[t].n && !memcmp(list[k], src + st.toks[t].pos, st.toks[t].n)) return 1;
    return 0;
}

/* A launch of a kernel template whose template arguments nvcc deduces from
 * the launch's arguments (fill<<<g, b>>>(p, 1.0f) for template <class T>
 * __global__ void fill(T *, T)). The emulator's launch needs the kernel's
 * address, so after the kernel's first declaration the rewrite declares a
 * function with the kernel's template parameters and parameters, copied,
 * that returns that address's type:
 *   template <class T> auto simt_kernel_of_fill(T *p, T v) -> decltype(&fill<T>);
 * A call of it deduces as a call of the kernel does, and the launch takes
 * the kernel's address as that type (see rewrite_launch). Only declared: it
 * is named in decltype alone. Returns 0 where the kernel's template
 * parameters cannot be named (one without a name, or a template that is not
 * the declaration's first word), and the launch stays refused. */
static int deduction_helper(size_t f, size_t k, size_t n, int insert)
{
    const fn_rec *first = NULL;
    for (size_t r = f; r < f + k; r++) {
        const fn_rec *fr = &st.fns[st.by_name[r]];
        if (!first || fr->start < first->start) first = fr;
    }
    for (int h = 0; h < st.nhelped; h++)
        if (same_name(st.helped[h], first->name)) return 1;
    size_t t = first->start, open = first->name + 1;
    if (!tok_is(t, "template") || !tok_punct(t + 1, '<') || !tok_punct(open, '(') || st.nhelped == 64) return 0;
    /* The template parameters' names, each followed by ... where it is a
     * pack: the last word of each, before any default, at its own depth (not
     * a word of a template template parameter's list, nor of a default). */
    static const char *const unnamed[] = {"typename", "class", "int", "unsigned", "long", "short", "char",
                                          "bool", "auto", "signed", "float", "double", "const", "volatile"};
    buf names = {0};
    size_t b = t + 2, name = 0, close = 0;
    int depth = 0, nparams = 0, pack = 0, in_default = 0, bad = 0;
    for (size_t u = t + 2; u < first->name && !close; u++) {
        int at = depth == 0;
        if (at && (tok_punct(u, ',') || tok_punct(u, '>'))) { /* the end of one parameter */
            if (u > b) {
                for (size_t w = 0; name && w < sizeof unnamed / sizeof *unnamed; w++) bad |= tok_is(name, unnamed[w]);
                bad |= !name;
                if (!bad) {
                    if (nparams++) puts_(&names, ", ");
                    put(&names, src + st.toks[name].pos, st.toks[name].n);
                    if (pack) puts_(&names, "...");
                }
            }
            if (tok_punct(u, '>')) close = u;
            b = u + 1, name = 0, pack = 0, in_default = 0;
            continue;
        }
        if (tok_punct(u, '(') || tok_punct(u, '[')) {
            u = tok_match(u);
            continue;
        }
        if (tok_punct(u, '<')) depth++;
        else if (tok_punct(u, '>')) depth--;
        else if (at && tok_punct(u, '=')) in_default = 1;
        else if (at && !in_default && st.toks[u].type == T_IDENT) name = u;
        else if (at && !in_default && tok_punct(u, '.')) pack = 1;
    }
    if (!close || bad || nparams == 0 || !insert) {
        free(names.s);
        return close && !bad && nparams > 0;
    }
    size_t pclose = tok_match(open);
    char *header = one_line(st.toks[t].pos, st.toks[close].pos + 1);
    char *params = one_line(st.toks[open].pos, st.toks[pclose].pos + 1);
    buf text = {0};
    puts_(&text, " ");
    puts_(&text, header);
    puts_(&text, " auto simt_kernel_of_");
    put(&text, src + st.toks[n].pos, st.toks[n].n);
    puts_(&text, params);
    puts_(&text, " -> decltype(&");
    put(&text, src + st.toks[n].pos, st.toks[n].n);
    puts_(&text, "<");
    put(&text, names.s, names.n);
    puts_(&text, ">);");
    free(header);
    free(params);
    free(names.s);
    add_insert(st.toks[first->end].pos + 1, text.s);
    st.helped[st.nhelped++] = first->name;
    return 1;
}

/* A launch that passes args of a kernel's arguments and leaves the rest to
 * their defaults, given in the declaration whose parameter list opens at
 * token open: nvcc fills them in, as for any call. The emulator's launch
 * takes every argument (it copies them as the kernel's parameters), so the
 * rewrite adds the defaults' text after the launch's arguments, as the
 * call would have them. Returns 0 where a parameter from args on has no
 * default. */
static int filled_defaults(size_t t, size_t open, int args)
{
    size_t close = tok_match(open), eq = 0;
    int depth = 0, index = 0;
    buf text = {0};
    for (size_t u = open + 1; u <= close; u++) {
        if (u < close && (tok_punct(u, '(') || tok_punct(u, '[') || tok_punct(u, '{') || tok_punct(u, '<'))) depth++;
        if (u < close && (tok_punct(u, ')') || tok_punct(u, ']') || tok_punct(u, '}') || tok_punct(u, '>'))) depth--;
        if (depth) continue;
        if (u < close && tok_punct(u, '=') && !eq) eq = u;
        if (u < close && !tok_punct(u, ',')) continue;
        if (index++ >= args) { /* the end of a parameter the launch leaves out */
            if (!eq || eq + 1 >= u) {
                free(text.s);
                return 0;
            }
            char *value = one_line(st.toks[eq + 1].pos, st.toks[u - 1].pos + st.toks[u - 1].n);
            if (text.n || args) puts_(&text, ", ");
            puts_(&text, value);
            free(value);
        }
        eq = 0;
    }
    if (!text.s) return 0; /* no parameter left to fill: the counts disagree (a list this scan misreads) */
    st.filled = grow(st.filled, &st.filled_cap, st.nfilled, sizeof(*st.filled));
    st.filled[st.nfilled].pos = st.toks[t].pos;
    st.filled[st.nfilled++].text = text.s;
    return 1;
}

static int kernel_launch_limits(size_t n, size_t t, int deduced, int namespaces)
{
    size_t f, k = fns_named(n, &f), first = 0;
    /* Two bodies with different parameters are overloads; with the same
     * ones, the branches of an #if or kernels of two namespaces, which nvcc
     * tells apart as the emulator does. Records that disagree on the count
     * leave it unknown. */
    int templ = 0, bodies = 0, overloads = 0, params = -2, defaults = 0;
    size_t with_defaults = 0; /* the '(' of the declaration that gives them */
    for (size_t r = f; r < f + k; r++) {
        const fn_rec *fr = &st.fns[st.by_name[r]];
        templ += fr->templ != 0;
        if (!tok_punct(fr->name + 1, '(')) {
            params = -1;
            continue;
        }
        if (fr->close) {
            if (bodies++ == 0) first = fr->name + 1;
            else overloads |= !same_params(first, fr->name + 1);
        }
        int np, nd;
        count_params(fr->name + 1, &np, &nd);
        params = params == -2 || params == np ? np : -1;
        if (nd > defaults) defaults = nd, with_defaults = fr->name + 1;
    }
    const char *name = src + st.toks[n].pos;
    int nn = (int)st.toks[n].n, line = line_of(st.toks[t].pos);
    /* Kernels of one name in two namespaces are two kernels, each launched
     * by its own (the scanner does not know which namespace holds which):
     * a name all of whose kernels are templates is the one sure case. */
    if (deduced && templ == (int)k && deduction_helper(f, k, n, 1)) {
        st.deduced = grow(st.deduced, &st.deduced_cap, st.ndeduced, sizeof(*st.deduced));
        st.deduced[st.ndeduced++] = st.toks[t].pos;
    } else if (deduced && templ == (int)k) {
        say(line,
            "error: the emulator cannot deduce the template arguments of kernel %.*s from a "
            "launch's arguments, as nvcc does\n",
            nn, name);
        say(line,
            "note: name them at the launch: %.*s<...><<<grid, block>>>(...), which nvcc "
            "builds too\n",
            nn, name);
        return 1;
    }
    if (overloads && !templ && !namespaces) {
        say(line,
            "error: the emulator cannot choose among overloaded kernels named %.*s at a launch, "
            "as nvcc does\n",
            nn, name);
        say(line, "note: give each kernel a name of its own\n");
        return 1;
    }
    int args = launch_args(st.toks[t].pos);
    if (args < 0 || params < 0 || args == params) return 0;
    if (args > params || args < params - defaults) { /* nvcc refuses it too, in these words */
        int many = args > params;
        say(line,
            "error: too %s arguments in the launch of kernel %.*s: it takes %s%d, the launch "
            "passes %d\n",
            many ? "many" : "few", nn, name,
            !defaults ? ""
            : many    ? "at most "
                      : "at least ",
            many ? params : params - defaults, args);
        return 1;
    }
    /* In a kernel template, a default may name the template's parameters,
     * which the launch's scope does not have. */
    if (!templ && !overloads && filled_defaults(t, with_defaults, args)) return 0;
    say(line,
        "error: the emulator does not fill in the default arguments of %s %.*s at a launch, "
        "as nvcc does: it takes %d, the launch passes %d\n",
        templ ? "kernel template" : "kernel", nn, name, params, args);
    say(line, "note: pass every argument at the launch\n");
    return 1;
}

/* The innermost function whose body holds token t, or NULL. */
static const fn_rec *enclosing_fn(size_t t)
{
    const fn_rec *in = NULL;
    for (size_t f = 0; f < st.nfns; f++)
        if (st.fns[f].close && st.fns[f].open < t && t < st.fns[f].close && (!in || st.fns[f].open > in->open))
            in = &st.fns[f];
    return in;
}

/* A launch at t inside a kernel or a __device__ function (or a __host__
 * __device__ one, compiled for the GPU too): dynamic parallelism, which
 * nvcc builds only as relocatable device code (-rdc=true), which the course
 * does not use; the emulator does not run it. Returns 1 when reported. */
static int launch_from_device(size_t t)
{
    const fn_rec *f = enclosing_fn(t);
    if (!f || (f->space != SP_GLOBAL && f->space != SP_DEVICE && f->space != SP_BOTH)) return 0;
    /* A lambda marked for the host inside it would be another function. */
    for (size_t u = f->open + 1; u < t; u++)
        if (tok_is(u, "__host__") && f->space != SP_BOTH) return 0;
    int line = line_of(st.toks[t].pos);
    say(line,
        "error: kernel launch from __device__ or __global__ functions requires separate compilation mode (in %s "
        "function \"%.*s\")\n",
        space_word(f->space), (int)st.toks[f->name].n, src + st.toks[f->name].pos);
    say(line, "note: a kernel launching a kernel is dynamic parallelism, which needs relocatable device code (nvcc "
              "-rdc=true) and which the course and the emulator leave out: launch the second kernel from host code "
              "after the first, in the same stream\n");
    return 1;
}

/* A launch at t of kernel n, which this file does not declare, its
 * template arguments left to deduce: where a header declares it as a
 * kernel template, the launch takes the deduced form, whose helper the
 * header's copy declares (see across). Returns 1 where the helper cannot be
 * written, with the error a kernel of this file would draw. */
static int header_kernel_launch(size_t n, size_t t)
{
    if (across.first && !name_listed(across.wanted, across.nwanted, n)) {
        across.wanted = grow(across.wanted, &across.wanted_cap, across.nwanted, sizeof(*across.wanted));
        across.wanted[across.nwanted] = strndup(src + st.toks[n].pos, st.toks[n].n);
        if (!across.wanted[across.nwanted++]) {
            perror("simt-rewrite");
            exit(2);
        }
    }
    int found = 0, ok = 1;
    for (size_t k = 0; k < across.nkernels; k++) {
        if (strlen(across.kernels[k].name) != st.toks[n].n ||
            memcmp(across.kernels[k].name, src + st.toks[n].pos, st.toks[n].n) != 0)
            continue;
        found = 1;
        ok &= across.kernels[k].ok;
    }
    if (!found) return 0; /* not a kernel template of a header read here: left to the compiler */
    if (ok) {
        st.deduced = grow(st.deduced, &st.deduced_cap, st.ndeduced, sizeof(*st.deduced));
        st.deduced[st.ndeduced++] = st.toks[t].pos;
        return 0;
    }
    const char *name = src + st.toks[n].pos;
    int nn = (int)st.toks[n].n, line = line_of(st.toks[t].pos);
    say(line,
        "error: the emulator cannot deduce the template arguments of kernel %.*s from a "
        "launch's arguments, as nvcc does\n",
        nn, name);
    say(line,
        "note: name them at the launch: %.*s<...><<<grid, block>>>(...), which nvcc "
        "builds too\n",
        nn, name);
    return 1;
}

/* In a header: each kernel template's first declaration, noted in the
 * first pass (see across); in either, a helper after it where a launch of
 * another file leaves its template arguments to deduce. */
static void header_kernel_templates(void)
{
    if (across.file == 0) return;
    for (size_t f = 0; f < st.nfns; f++) {
        const fn_rec *fr = &st.fns[f];
        if (fr->space != SP_GLOBAL || !fr->templ || st.toks[fr->name].arch) continue;
        size_t first, k = fns_named(fr->name, &first), earliest = fr->start;
        int all_templ = 1;
        for (size_t r = first; r < first + k; r++) {
            const fn_rec *o = &st.fns[st.by_name[r]];
            all_templ &= o->templ != 0;
            if (o->start < earliest) earliest = o->start;
        }
        if (earliest != fr->start) continue; /* not its first declaration */
        int ok = all_templ && deduction_helper(first, k, fr->name, 0);
        if (across.first) {
            across.kernels = grow(across.kernels, &across.kernels_cap, across.nkernels, sizeof(*across.kernels));
            across.kernels[across.nkernels].file = across.file;
            across.kernels[across.nkernels].ok = ok;
            across.kernels[across.nkernels].name = strndup(src + st.toks[fr->name].pos, st.toks[fr->name].n);
            if (!across.kernels[across.nkernels++].name) {
                perror("simt-rewrite");
                exit(2);
            }
        }
        if (ok && name_listed(across.wanted, across.nwanted, fr->name)) deduction_helper(first, k, fr->name, 1);
    }
}

static int check_launches(void)
{
    int errors = 0, namespaces = 0; /* does the file open a namespace? (kernel_launch_limits) */
    for (size_t u = 0; u < st.ntoks && !namespaces; u++) namespaces = tok_is(u, "namespace");
    for (size_t t = 1; t + 2 < st.ntoks; t++) {
        if (!tok_punct(t, '<') || !tok_punct(t + 1, '<') || !tok_punct(t + 2, '<') ||
            st.toks[t + 1].pos != st.toks[t].pos + 1 ||
            st.toks[t + 2].pos != st.toks[t].pos + 2 || st.toks[t].arch)
            continue;
        size_t n = t - 1;
        int deduced = !tok_punct(n, '>');
        if (tok_punct(n, '>')) { /* a template-id: back over its arguments */
            int depth = 0, parens = 0;
            for (;; n--) {
                parens += (tok_punct(n, ')') || tok_punct(n, ']')) - (tok_punct(n, '(') || tok_punct(n, '['));
                if (!parens && tok_punct(n, '>')) depth++;
                if (!parens && tok_punct(n, '<') && --depth == 0) break;
                if (n == 0 || tok_punct(n, ';') || tok_punct(n, '{') || tok_punct(n, '}')) break;
            }
            if (depth != 0 || n == 0) continue;
            n--;
        }
        /* A qualified name (ns::k) only where its template arguments are
         * deduced: the helper that deduces them is named as the kernel is. */
        if (st.toks[n].type != T_IDENT || (n > 0 && (tok_is(n - 1, "->") || tok_punct(n - 1, '.'))) ||
            (n > 0 && tok_is(n - 1, "::") && !deduced))
            continue;
        if (launch_from_device(t)) {
            errors++;
            t += 2;
            continue;
        }
        int sp = spaces_of(n);
        if (!sp && deduced) {
            errors += header_kernel_launch(n, t);
            continue;
        }
        if (n > 0 && tok_is(n - 1, "::") && sp != SP_GLOBAL) continue;
        if (sp == SP_GLOBAL) {
            errors += kernel_launch_limits(n, t, deduced, namespaces);
            t += 2;
            continue;
        }
        if (sp != SP_HOST && sp != SP_DEVICE) continue;
        const char *name = src + st.toks[n].pos;
        int nn = (int)st.toks[n].n;
        say(line_of(st.toks[t].pos), "error: a %s function call cannot be configured\n",
            sp == SP_DEVICE ? "__device__" : "host");
        say(line_of(st.toks[t].pos),
            "note: only a kernel is launched with <<<...>>>: mark %.*s __global__ (it returns void)\n", nn, name);
        errors++;
        t += 2;
    }
    return errors;
}

/* Returns the number of calls nvcc would refuse, each reported on stderr.
 * A __host__ __device__ function is compiled for both sides, so its calls
 * of a host or a __device__ function are refused as well (of a host one,
 * nvcc warns, #20011-D, and the course's -Werror all-warnings makes it an
 * error); a template one only where it is instantiated, so it is left
 * alone. */
/* A kernel returns void: nvcc refuses any other type ("a __global__ function
 * must have a void return type"), and here the launch would not build with
 * a message that says so. Not checked where the return type is trailing
 * (auto k() -> void). */
static int check_kernel_returns_void(const fn_rec *f)
{
    if (f->space != SP_GLOBAL || st.toks[f->name].arch) return 0;
    size_t close = tok_match(f->name + 1);
    if (tok_is(close + 1, "->")) return 0;
    int voids = 0, indirect = 0;
    for (size_t t = f->start; t < f->name; t++) {
        if (tok_is(t, "template") && tok_punct(t + 1, '<')) {
            int depth = 0;
            for (t++; t < f->name; t++) {
                if (tok_punct(t, '(') || tok_punct(t, '[')) t = tok_match(t);
                else if (tok_punct(t, '<')) depth++;
                else if (tok_punct(t, '>') && --depth == 0) break;
            }
            continue;
        }
        if (tok_punct(t, '(') || tok_punct(t, '[')) { /* __launch_bounds__(...), attributes */
            t = tok_match(t);
            continue;
        }
        voids += tok_is(t, "void");
        indirect |= voids && (tok_punct(t, '*') || tok_punct(t, '&'));
    }
    if (voids == 1 && !indirect) return 0;
    say(line_of(st.toks[f->name].pos), "error: a __global__ function must have a void return type (kernel \"%.*s\")\n",
        (int)st.toks[f->name].n, src + st.toks[f->name].pos);
    say(line_of(st.toks[f->name].pos),
        "note: a kernel returns nothing: write its results to memory that a pointer argument names\n");
    return 1;
}

static int check_execution_spaces(void)
{
    tokenize();
    scan_scope(0, st.ntoks);
    int errors = st.decl_errors;
    for (size_t f = 0; f < st.nfns; f++) {
        if (st.fns[f].close && st.fns[f].space != SP_UNKNOWN && !(st.fns[f].space == SP_BOTH && st.fns[f].templ))
            errors += check_calls(&st.fns[f]);
        errors += check_kernel_returns_void(&st.fns[f]);
    }
    errors += check_launches();
    header_kernel_templates();
    host_code_marks();
    if (st.ninserts > 1) qsort(st.inserts, st.ninserts, sizeof(*st.inserts), insert_order);
    return errors;
}

/* __launch_bounds__(max_threads[, min_blocks]) -- i points at the name. A
 * GPU refuses to launch the kernel with more threads per block than
 * max_threads (its registers were allotted for that many), so the kernel's
 * body gets a check of the launch (simt_check_launch_bounds); this returns
 * the first argument's text, on one line, for it, or NULL. */
static char *launch_bound(size_t i)
{
    size_t j = i + 17;
    while (j < len && isspace((unsigned char)src[j])) j++;
    if (j >= len || src[j] != '(') return NULL;
    size_t close = find_close(j + 1, ")");
    if (close == (size_t)-1) return NULL;
    size_t end = j + 1;
    int depth = 0;
    while (end < close) {
        size_t k = skip_lexeme(end);
        if (k) {
            end += k;
            continue;
        }
        if (src[end] == '(' || src[end] == '[' || src[end] == '{') depth++;
        if (src[end] == ')' || src[end] == ']' || src[end] == '}') depth--;
        if (depth == 0 && src[end] == ',') break;
        end++;
    }
    /* On one line: a // comment would hide the check's own closing
     * parenthesis and the kernel's first line. */
    return one_line(j + 1, end);
}

static char *read_file(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    buf b = {0};
    char tmp[65536];
    size_t k;
    while ((k = fread(tmp, 1, sizeof(tmp), f)) > 0) put(&b, tmp, k);
    fclose(f);
    if (!b.s) put(&b, "", 0);
    *n = b.n;
    return b.s;
}

/* --- inline PTX ----------------------------------------------------------------
 * asm [volatile] ("ptx" : outputs : inputs : clobbers) in a kernel holds
 * PTX, which g++ would hand to the x86 assembler ("no such instruction").
 * An asm whose text is one PTX instruction the emulator models becomes a
 * call into simt_ptx.h's simt::ptx, on the asm's own line; other PTX
 * becomes a static_assert that names the instruction, which fires only
 * where g++ compiles it (not under #ifdef __CUDA_ARCH__). An asm whose
 * first word holds no '.' (x86's, or the compiler barrier "") is left
 * alone, and so is one this scan cannot read (a macro among its strings,
 * asm goto): the assembler's message then stands, and simtcc adds a note. */

enum { ASM_OPS_MAX = 192 }; /* a wgmma m64n256k16 has 128 accumulators and more */

typedef struct {
    size_t b, e;      /* the operand's expression, inside its parentheses */
    char mode;        /* '=' output, '+' read-write output, 0 input */
    int tied;         /* an input's matching constraint ("0"): that output's number, else -1 */
    int imm;          /* an immediate ("n"), which ptxas takes where a register is refused */
} asm_op;

/* Scratch for the one asm statement rewrite_asm is reading, cleared and
 * freed there: nothing of it outlives the statement (st holds the file's
 * state). */
static struct {
    asm_op ops[ASM_OPS_MAX];
    int nops;
    buf call;    /* the emulator's call, or a static_assert */
    int refused; /* call is the static_assert */
} as;

/* White space, comments and (in a #define) line continuations from i. */
static size_t asm_space(size_t i, size_t end)
{
    for (;;) {
        size_t k;
        if (i < end && isspace((unsigned char)src[i])) i++;
        else if (i + 1 < end && src[i] == '\\' && src[i + 1] == '\n') i += 2;
        else if (i < end && src[i] == '/' && (k = skip_lexeme(i)) != 0) i += k;
        else return i;
    }
}

/* Append the string literal at i (its quotes included, n bytes) to t, decoded. */
static void asm_decode(buf *t, size_t i, size_t n)
{
    for (size_t k = i + 1; k + 1 < i + n; k++) {
        char c = src[k];
        if (c == '\\' && k + 2 < i + n) {
            char e = src[++k];
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        }
        put(t, &c, 1);
    }
}

/* The operand a template names (%3), or -1. *p moves past it. */
static int asm_ref(const char **p)
{
    const char *s = *p;
    if (*s != '%') return -1;
    s++;
    if (!isdigit((unsigned char)*s)) return -1;
    int n = 0;
    while (isdigit((unsigned char)*s) && n < 1000) n = n * 10 + (*s++ - '0');
    *p = s;
    return n < as.nops ? n : -1;
}

/* Why the instruction cannot run here, as a static_assert in as.call. */
static void asm_refuse(const char *opcode, const char *why)
{
    as.call.n = 0;
    as.refused = 1;
    puts_(&as.call, "static_assert(sizeof(int) == 0, \"inline PTX '");
    for (const char *c = opcode; *c; c++)
        if (isprint((unsigned char)*c) && *c != '"' && *c != '\\') put(&as.call, c, 1);
    puts_(&as.call, "': ");
    puts_(&as.call, why);
    puts_(&as.call, "\");");
}

static const char asm_not_emulated[] =
    "not emulated. The emulator runs these PTX instructions in inline asm: mma.sync.aligned m16n8k16 and m16n8k8 "
    "(row.col, f32 accumulators, bf16 or f16 inputs), ldmatrix.sync.aligned.m8n8 (x1, x2, x4, .trans), cp.async "
    "(ca, cg; commit_group, wait_group, wait_all), ld and st (.shared, .global; 32-bit words, .v2, .v4), "
    "cvt.rn.{bf16x2,f16x2,bf16,f16}.f32, ex2/lg2/rcp/rsqrt/sqrt/tanh/sin/cos .approx(.ftz).f32, membar and fence, "
    "bar.sync 0, trap, and mov of a register or of %laneid, "
    "%warpid, %tid, %ntid, %ctaid, %nctaid, %lanemask_*, %clock, %clock64, %globaltimer, "
    "%dynamic_smem_size. For Hopper's wgmma, TMA and mbarriers use common/hopper.cuh; or put this asm under "
    "#ifdef __CUDA_ARCH__ with C++ for the emulator under #else";

/* An operand that is one register, %n, white space around it: n, or -1. */
static int asm_reg_index(const char *s)
{
    while (isspace((unsigned char)*s)) s++;
    int r = asm_ref(&s);
    while (isspace((unsigned char)*s)) s++;
    return *s ? -1 : r;
}

/* A register operand as C++ into the call, __simt_p[n]. 0 if it is not one. */
static int asm_register(buf *b, const char *s)
{
    int r = asm_reg_index(s);
    if (r < 0) return 0;
    char t[32];
    snprintf(t, sizeof t, "__simt_p[%d]", r);
    puts_(b, t);
    return 1;
}

/* One operand of the instruction, as C++ into the call: a register
 * (__simt_p[n]) or an immediate. 0 if it is neither. */
static int asm_value(buf *b, const char *s)
{
    if (asm_register(b, s)) return 1;
    while (isspace((unsigned char)*s)) s++;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    while (isspace((unsigned char)*end)) end++;
    if (end == s || *end || *s == '-') return 0;
    char t[64];
    snprintf(t, sizeof t, "::simt::ptx::reg(%lluull)", v);
    puts_(b, t);
    return 1;
}

/* Whether an operand is an immediate: a number written in the template,
 * or %n of an "n" operand. */
static int asm_immediate(const char *s)
{
    int r = asm_reg_index(s);
    if (r >= 0) return as.ops[r].imm;
    while (isspace((unsigned char)*s)) s++;
    return isdigit((unsigned char)*s);
}

/* [%n] or [%n+imm]: the register, then the offset. 0 if it is no address. */
static int asm_address(buf *b, const char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (*s != '[' || n < 2 || s[n - 1] != ']') return 0;
    const char *p = s + 1;
    while (isspace((unsigned char)*p)) p++;
    int r = asm_ref(&p);
    if (r < 0) return 0;
    while (isspace((unsigned char)*p)) p++;
    long long off = 0;
    if (*p == '+' || *p == '-') {
        char *end;
        off = (long long)strtoull(p + 1, &end, 0);
        if (end == p + 1) return 0;
        if (*p == '-') off = -off;
        p = end;
        while (isspace((unsigned char)*p)) p++;
    }
    if (p != s + n - 1) return 0;
    char t[64];
    snprintf(t, sizeof t, "__simt_p[%d], %lldll", r, off);
    puts_(b, t);
    return 1;
}

/* {%a, %b, ...} with exactly want registers, each ", __simt_p[k]". */
static int asm_vector(buf *b, const char *s, int want)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (*s != '{' || s[n - 1] != '}') return 0;
    int got = 0;
    const char *p = s + 1;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        int r = asm_ref(&p);
        if (r < 0) return 0;
        char t[32];
        snprintf(t, sizeof t, ", __simt_p[%d]", r);
        puts_(b, t);
        got++;
        while (isspace((unsigned char)*p)) p++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '}' && p == s + n - 1) return got == want;
        return 0;
    }
}

/* The instruction's operands, split at the commas outside {} and []. */
static int asm_operands(char *text, char **ops, int max)
{
    int n = 0, depth = 0;
    char *start = text;
    while (isspace((unsigned char)*start)) start++;
    if (!*start) return 0;
    for (char *c = start;; c++) {
        if (*c == '{' || *c == '[') depth++;
        if (*c == '}' || *c == ']') depth--;
        if ((*c == ',' && depth == 0) || !*c) {
            int last = !*c;
            *c = 0;
            if (n == max) return -1;
            ops[n++] = start;
            if (last) return n;
            start = c + 1;
        }
    }
}

static int is_word(const char *a, const char *b) { return strcmp(a, b) == 0; }

/* Build as.call for the instruction (opcode, its parts split at '.', and
 * its operands), or refuse it. */
static void asm_instruction(const char *opcode, char **part, int nparts, char **op, int nop)
{
    buf *b = &as.call;
    char t[160];
    if (nparts == 10 && is_word(part[0], "mma") && is_word(part[1], "sync") && is_word(part[2], "aligned") &&
        (is_word(part[3], "m16n8k16") || is_word(part[3], "m16n8k8")) && is_word(part[4], "row") &&
        is_word(part[5], "col") && is_word(part[6], "f32") && is_word(part[9], "f32") && is_word(part[7], part[8]) &&
        (is_word(part[7], "bf16") || is_word(part[7], "f16"))) {
        int k16 = is_word(part[3], "m16n8k16");
        snprintf(t, sizeof t, "::simt::ptx::mma_m16n8k%d(%d", k16 ? 16 : 8, is_word(part[7], "bf16"));
        puts_(b, t);
        if (nop != 4 || !asm_vector(b, op[0], 4) || !asm_vector(b, op[1], k16 ? 4 : 2) ||
            !asm_vector(b, op[2], k16 ? 2 : 1) || !asm_vector(b, op[3], 4))
            return asm_refuse(opcode, k16 ? "its operands are {d0,d1,d2,d3}, {a0,a1,a2,a3}, {b0,b1}, {c0,c1,c2,c3}"
                                          : "its operands are {d0,d1,d2,d3}, {a0,a1}, {b0}, {c0,c1,c2,c3}");
        puts_(b, ");");
        return;
    }
    if (is_word(part[0], "ldmatrix") && nparts >= 7 && is_word(part[1], "sync") && is_word(part[2], "aligned")) {
        /* ldmatrix.sync.aligned, then m8n8, x1|x2|x4, .trans, .shared, .b16 in
         * either order of shape and number (CUTLASS writes x4.m8n8) */
        int lm_shape = 0, lm_num = 0, lm_trans = 0, lm_space = 0, lm_type = 0, lm_other = 0;
        for (int k = 3; k < nparts; k++) {
            const char *w = part[k];
            if (is_word(w, "m8n8")) lm_shape++;
            else if (is_word(w, "x1") || is_word(w, "x2") || is_word(w, "x4")) lm_num = lm_num ? -1 : w[1] - '0';
            else if (is_word(w, "trans")) lm_trans++;
            else if (is_word(w, "shared") || is_word(w, "shared::cta")) lm_space++;
            else if (k == nparts - 1 && is_word(w, "b16")) lm_type++;
            else lm_other++;
        }
        if (lm_shape == 1 && lm_num > 0 && lm_trans <= 1 && lm_space == 1 && lm_type == 1 && !lm_other) {
            int nmat = lm_num;
            snprintf(t, sizeof t, "::simt::ptx::ldmatrix(%d, %d", nmat, lm_trans);
            puts_(b, t);
            if (nop != 2 || !asm_vector(b, op[0], nmat))
                return asm_refuse(opcode, "its operands are {r0, ...} (one register a matrix) and [address]");
            for (int j = nmat; j < 4; j++) puts_(b, ", __simt_p[__simt_scratch]");
            puts_(b, ", ");
            if (!asm_address(b, op[1])) return asm_refuse(opcode, "its second operand is the [address] of the row");
            puts_(b, ", __FILE__, __LINE__);");
            return;
        }
    }
    if (nparts >= 3 && is_word(part[0], "cp") && is_word(part[1], "async")) {
        if (nparts == 3 && (is_word(part[2], "commit_group") || is_word(part[2], "wait_all"))) {
            if (nop) return asm_refuse(opcode, "it takes no operands");
            puts_(b, is_word(part[2], "wait_all") ? "::simt::ptx::cp_async_wait_all();"
                                                  : "::simt::ptx::cp_async_commit_group();");
            return;
        }
        if (nparts == 3 && is_word(part[2], "wait_group")) {
            if (nop == 1 && !asm_immediate(op[0]))
                return asm_refuse(opcode, "the number of groups must be an immediate (a constant, or an \\\"n\\\" "
                                          "operand); ptxas refuses a register (Arguments mismatch)");
            puts_(b, "::simt::ptx::cp_async_wait_group(");
            if (nop != 1 || !asm_value(b, op[0])) return asm_refuse(opcode, "its operand is the number of groups");
            puts_(b, ");");
            return;
        }
        int cg = is_word(part[2], "cg");
        if ((nparts == 5 || nparts == 6) && (cg || is_word(part[2], "ca")) &&
            (is_word(part[3], "shared") || is_word(part[3], "shared::cta")) && is_word(part[4], "global") &&
            (nparts == 5 || is_word(part[5], "L2::64B") || is_word(part[5], "L2::128B") ||
             is_word(part[5], "L2::256B"))) {
            if (nop != 3 && nop != 4)
                return asm_refuse(opcode, "its operands are [shared address], [global address], cp-size and, "
                                          "for a zero fill, src-size");
            if (!asm_immediate(op[2]))
                return asm_refuse(opcode, "cp-size must be an immediate (4, 8 or 16, or an \\\"n\\\" operand); "
                                          "ptxas refuses a register (Arguments mismatch)");
            char *end;
            unsigned long size = strtoul(op[2], &end, 0);
            while (isspace((unsigned char)*end)) end++;
            if (end != op[2] && !*end && (cg ? size != 16 : size != 4 && size != 8 && size != 16))
                return asm_refuse(opcode, cg ? "a copy with .cg is 16 bytes" : "a copy is 4, 8 or 16 bytes");
            puts_(b, "::simt::ptx::cp_async(");
            if (!asm_address(b, op[0])) return asm_refuse(opcode, "its first operand is the [shared address]");
            puts_(b, ", ");
            if (!asm_address(b, op[1])) return asm_refuse(opcode, "its second operand is the [global address]");
            puts_(b, ", ");
            if (!asm_value(b, op[2])) return asm_refuse(opcode, "its third operand is the copy's size");
            puts_(b, ", ");
            if (!asm_value(b, op[nop == 4 ? 3 : 2])) return asm_refuse(opcode, "its fourth operand is the bytes to read");
            puts_(b, cg ? ", 1, __FILE__, __LINE__);" : ", 0, __FILE__, __LINE__);");
            return;
        }
    }
    if (nparts == 2 && is_word(part[0], "mov") &&
        (is_word(part[1], "u32") || is_word(part[1], "b32") || is_word(part[1], "s32") || is_word(part[1], "u64") ||
         is_word(part[1], "b64") || is_word(part[1], "s64")) &&
        nop == 2) {
        static const char *const sregs[] = {
            "laneid",     "warpid",     "tid.x",      "tid.y",      "tid.z",       "ntid.x",     "ntid.y",
            "ntid.z",     "ctaid.x",    "ctaid.y",    "ctaid.z",    "nctaid.x",    "nctaid.y",   "nctaid.z",
            "lanemask_eq", "lanemask_lt", "lanemask_le", "lanemask_gt", "lanemask_ge", "clock",   "clock64",
            "globaltimer", "dynamic_smem_size"};
        const char *src_op = op[1];
        while (isspace((unsigned char)*src_op)) src_op++;
        int d = asm_reg_index(op[0]);
        if (d < 0) return asm_refuse(opcode, "its destination is one register (%n)");
        const char *wide = part[1][1] == '6' ? "unsigned long long" : "unsigned int";
        if (src_op[0] == '%' && src_op[1] == '%') {
            char name[32];
            size_t n = strcspn(src_op + 2, " \t\n");
            for (size_t s = 0; s < sizeof sregs / sizeof *sregs; s++)
                if (n < sizeof name && strlen(sregs[s]) == n && strncmp(src_op + 2, sregs[s], n) == 0) {
                    snprintf(name, sizeof name, "%s", sregs[s]);
                    if (name[n - 2] == '.') name[n - 2] = '_';
                    snprintf(t, sizeof t, "__simt_p[%d] = ::simt::ptx::reg((%s)::simt::ptx::sreg_%s());", d, wide,
                             name);
                    puts_(b, t);
                    return;
                }
            char what[96];
            snprintf(what, sizeof what, "%s %%%.*s", opcode, (int)(n < 40 ? n : 40), src_op + 2);
            return asm_refuse(what, asm_not_emulated);
        }
        snprintf(t, sizeof t, "__simt_p[%d] = ::simt::ptx::reg((%s)(", d, wide);
        puts_(b, t);
        if (!asm_value(b, src_op)) return asm_refuse(opcode, asm_not_emulated);
        puts_(b, part[1][1] == '6' ? ").bits);" : ").u32());");
        return;
    }
    if (nparts >= 3 && (is_word(part[0], "ld") || is_word(part[0], "st"))) {
        /* ld/st . shared|shared::cta|global [. cache hints] [. v2|v4] . b32|u32|s32|f32 */
        int store = is_word(part[0], "st"), shared = 0, global = 0, vec = 1, word = 0, other = 0;
        for (int k = 1; k < nparts; k++) {
            const char *w = part[k];
            if (is_word(w, "shared") || is_word(w, "shared::cta")) shared++;
            else if (is_word(w, "global")) global++;
            else if (is_word(w, "v2") || is_word(w, "v4")) vec = w[1] - '0';
            else if (k == nparts - 1 && (is_word(w, "b32") || is_word(w, "u32") || is_word(w, "s32") || is_word(w, "f32")))
                word = 1;
            else if (!(is_word(w, "nc") || is_word(w, "ca") || is_word(w, "cg") || is_word(w, "cs") ||
                       is_word(w, "lu") || is_word(w, "wb") || is_word(w, "wt") || strncmp(w, "L1::", 4) == 0 ||
                       strncmp(w, "L2::", 4) == 0))
                other = 1;
        }
        if (shared + global == 1 && word && !other) {
            snprintf(t, sizeof t, "::simt::ptx::%s(%d, %d", store ? "st" : "ld", shared, vec);
            puts_(b, t);
            const char *regs = op[store ? 1 : 0], *addr = op[store ? 0 : 1];
            if (nop != 2) return asm_refuse(opcode, store ? "its operands are [address], value" : "its operands are value, [address]");
            if (store) {
                puts_(b, ", ");
                if (!asm_address(b, addr)) return asm_refuse(opcode, "its first operand is the [address]");
            }
            if (vec == 1) {
                puts_(b, ", ");
                if (store ? !asm_value(b, regs) : !asm_register(b, regs))
                    return asm_refuse(opcode, "the value is one register");
            } else if (!asm_vector(b, regs, vec))
                return asm_refuse(opcode, "the value is a {...} vector of as many registers as .v2 or .v4 says");
            for (int j = vec; j < 4; j++) puts_(b, store ? ", ::simt::ptx::reg()" : ", __simt_p[__simt_scratch]");
            if (!store) {
                puts_(b, ", ");
                if (!asm_address(b, addr)) return asm_refuse(opcode, "its second operand is the [address]");
            }
            puts_(b, ", \"");
            puts_(b, opcode);
            puts_(b, "\", __FILE__, __LINE__);");
            return;
        }
    }
    if (nparts == 4 && is_word(part[0], "cvt") && is_word(part[1], "rn") && is_word(part[3], "f32") &&
        (is_word(part[2], "bf16x2") || is_word(part[2], "f16x2") || is_word(part[2], "bf16") || is_word(part[2], "f16"))) {
        int x2 = strstr(part[2], "x2") != NULL, bf16 = part[2][0] == 'b';
        snprintf(t, sizeof t, "::simt::ptx::cvt_%s(%d, ", x2 ? "x2" : "1", bf16);
        puts_(b, t);
        if (nop != (x2 ? 3 : 2) || !asm_register(b, op[0]))
            return asm_refuse(opcode, x2 ? "its operands are d, a, b" : "its operands are d, a");
        for (int j = 1; j < nop; j++) {
            puts_(b, ", ");
            if (!asm_value(b, op[j])) return asm_refuse(opcode, "its sources are registers");
        }
        puts_(b, ");");
        return;
    }
    if (nparts >= 3 && nparts <= 4 && is_word(part[nparts - 1], "f32") &&
        (nparts == 3 || is_word(part[2], "ftz"))) {
        static const struct {
            const char *name, *mode;
            char op;
        } fns[] = {{"ex2", "approx", 'e'},  {"lg2", "approx", 'l'},  {"rcp", "approx", 'r'}, {"rcp", "rn", 'r'},
                   {"rsqrt", "approx", 'q'}, {"sqrt", "approx", 's'}, {"sqrt", "rn", 's'},   {"tanh", "approx", 't'},
                   {"sin", "approx", 'S'},  {"cos", "approx", 'C'}};
        for (size_t f = 0; f < sizeof fns / sizeof *fns; f++)
            if (is_word(part[0], fns[f].name) && is_word(part[1], fns[f].mode)) {
                int d = nop == 2 ? asm_reg_index(op[0]) : -1;
                if (d < 0) return asm_refuse(opcode, "its operands are d, a");
                snprintf(t, sizeof t, "__simt_p[%d] = ::simt::ptx::reg(::simt::ptx::math('%c', %d, ", d, fns[f].op,
                         nparts == 4);
                puts_(b, t);
                if (!asm_value(b, op[1])) return asm_refuse(opcode, "its source is a register");
                puts_(b, "));");
                return;
            }
    }
    if ((is_word(part[0], "membar") && nparts == 2 &&
         (is_word(part[1], "cta") || is_word(part[1], "gl") || is_word(part[1], "sys"))) ||
        (is_word(part[0], "fence") && nparts >= 2 &&
         (is_word(part[1], "sc") || is_word(part[1], "acq_rel") || is_word(part[1], "proxy")))) {
        if (nop) return asm_refuse(opcode, "it takes no operands");
        puts_(b, "::simt::ptx::fence();");
        return;
    }
    if ((nparts == 2 || nparts == 3) && (is_word(part[0], "bar") || is_word(part[0], "barrier")) &&
        is_word(part[1], "sync") && (nparts == 2 || is_word(part[2], "aligned"))) {
        puts_(b, "::simt::ptx::bar_sync(");
        if (nop != 1 || !asm_value(b, op[0]))
            return asm_refuse(opcode, "the emulator has bar.sync with one operand, barrier 0 (__syncthreads); "
                                      "a thread count and named barriers are not emulated");
        puts_(b, ", __FILE__, __LINE__);");
        return;
    }
    if (nparts == 1 && is_word(part[0], "trap") && nop == 0) {
        puts_(b, "__trap();");
        return;
    }
    asm_refuse(opcode, asm_not_emulated);
}

/* From i at asm (or __asm__, __asm): the end of the statement's closing
 * parenthesis, with its replacement in out; 0 where it stays as it is. */
static size_t rewrite_asm(buf *out, size_t i, int in_define)
{
    size_t j = i;
    while (j < len && is_ident(src[j])) j++;
    for (;;) { /* qualifiers */
        j = asm_space(j, len);
        size_t w = j;
        while (w < len && is_ident(src[w])) w++;
        if (w == j) break;
        if (!((w - j == 8 && strncmp(src + j, "volatile", 8) == 0) ||
              (w - j == 12 && strncmp(src + j, "__volatile__", 12) == 0) ||
              (w - j == 10 && strncmp(src + j, "__volatile", 10) == 0) ||
              (w - j == 6 && strncmp(src + j, "inline", 6) == 0)))
            return 0; /* asm goto, or a name */
        j = w;
    }
    if (j >= len || src[j] != '(') return 0;
    size_t close = find_close(j + 1, ")");
    if (close == (size_t)-1) return 0;
    buf text = {0};
    puts_(&text, "");
    size_t k = asm_space(j + 1, close);
    int literals = 0;
    while (k < close && src[k] == '"') {
        size_t n = skip_lexeme(k);
        asm_decode(&text, k, n);
        literals++;
        k = asm_space(k + n, close);
    }
    /* Is it PTX: a first word with a '.', or an instruction without one. */
    const char *w0 = text.s;
    while (isspace((unsigned char)*w0)) w0++;
    size_t wn = strcspn(w0, " \t\n;");
    int ptx = *w0 != '.' && /* an assembler directive (.byte) is x86's */
              (memchr(w0, '.', wn) != NULL || *w0 == '{' || *w0 == '@' || (wn == 4 && strncmp(w0, "trap", 4) == 0));
    if (!literals || !ptx || (k < close && src[k] != ':')) {
        free(text.s);
        return 0;
    }
    /* The operands: outputs, inputs, then clobbers (strings, ignored). */
    as.nops = 0;
    for (int section = 0; section < 3 && k < close && src[k] == ':'; section++) {
        k = asm_space(k + 1, close);
        while (k < close && src[k] != ':') {
            if (section == 2) { /* a clobber list */
                k += src[k] == '"' ? skip_lexeme(k) : 1;
                k = asm_space(k, close);
                continue;
            }
            asm_op *o = &as.ops[as.nops];
            if (src[k] == '[') { /* [name]: refused below, as nvcc does */
                size_t e = k + 1;
                while (e < close && src[e] != ']') e++;
                k = asm_space(e + 1, close);
            }
            if (src[k] != '"' || as.nops == ASM_OPS_MAX) {
                free(text.s);
                return 0;
            }
            size_t cn = skip_lexeme(k);
            o->mode = section == 0 ? (src[k + 1] == '+' ? '+' : '=') : 0;
            o->tied = section == 1 && isdigit((unsigned char)src[k + 1]) ? atoi(src + k + 1) : -1;
            size_t ck = k + 1;
            while (src[ck] == '=' || src[ck] == '+' || src[ck] == '&') ck++;
            o->imm = src[ck] == 'n' || src[ck] == 'i';
            k = asm_space(k + cn, close);
            if (src[k] != '(') {
                free(text.s);
                return 0;
            }
            o->b = k + 1;
            o->e = find_close(k + 1, ")");
            if (o->e == (size_t)-1 || o->e > close) {
                free(text.s);
                return 0;
            }
            as.nops++;
            k = asm_space(o->e + 1, close);
            if (k < close && src[k] == ',') k = asm_space(k + 1, close);
        }
    }

    /* The instruction: one, without a predicate or a block of its own. */
    as.call.n = 0;
    as.refused = 0;
    puts_(&as.call, "");
    char *ins = text.s;
    while (isspace((unsigned char)*ins)) ins++;
    size_t n = strlen(ins);
    while (n && (isspace((unsigned char)ins[n - 1]) || ins[n - 1] == ';')) ins[--n] = 0;
    char opcode[128];
    snprintf(opcode, sizeof opcode, "%.*s", (int)strcspn(ins, " \t\n"), ins);
    if (strstr(ins, "%["))
        asm_refuse(opcode, "an operand named %[name]; nvcc does not take names in inline PTX (\\\"symbolic "
                           "operand reference not supported\\\"): refer to operands by number, %0, %1, ...");
    else if (*ins == '{' || *ins == '@')
        asm_refuse(opcode, "a block of PTX ({ ... }) or a predicated instruction: the emulator runs single "
                           "instructions only. For Hopper's wgmma, TMA and mbarriers use common/hopper.cuh; or put "
                           "this asm under #ifdef __CUDA_ARCH__ with C++ for the emulator under #else");
    else if (strchr(ins, ';'))
        asm_refuse(opcode, "more than one instruction in one asm: the emulator runs one instruction an asm "
                           "statement; write one asm for each");
    else {
        char *parts[16], *ops[16], *pc = opcode;
        char opcopy[128];
        snprintf(opcopy, sizeof opcopy, "%s", opcode);
        int np = 0;
        for (char *s = strtok_r(opcopy, ".", &pc); s && np < 16; s = strtok_r(NULL, ".", &pc)) parts[np++] = s;
        int nop = asm_operands(ins + strlen(opcode), ops, 16);
        if (nop < 0) asm_refuse(opcode, asm_not_emulated);
        else asm_instruction(opcode, parts, np, ops, nop);
    }

    /* do { registers; outputs bound and inputs copied; the call; outputs stored } while (0) */
    char t[160];
    int refused = as.refused;
    puts_(out, "do { ");
    if (!refused) {
        puts_(out, "::simt::ptx::device_only(\"");
        puts_(out, opcode); /* a word of the template: no quote or backslash in it */
        puts_(out, "\", __FILE__, __LINE__); ");
        snprintf(t, sizeof t, "::simt::ptx::reg __simt_p[%d]; const int __simt_scratch = %d; (void)__simt_p, (void)__simt_scratch; ",
                 as.nops + 1, as.nops);
        puts_(out, t);
        for (int o = 0; o < as.nops; o++) {
            char *e = one_line(as.ops[o].b, as.ops[o].e);
            if (as.ops[o].mode) snprintf(t, sizeof t, "auto &&__simt_o%d = (", o);
            else snprintf(t, sizeof t, "__simt_p[%d] = ::simt::ptx::reg((", o);
            puts_(out, t);
            puts_(out, e);
            puts_(out, as.ops[o].mode ? "); " : ")); ");
            free(e);
            if (as.ops[o].mode == '+') {
                snprintf(t, sizeof t, "__simt_p[%d] = ::simt::ptx::reg(__simt_o%d); ", o, o);
                puts_(out, t);
            }
            if (!as.ops[o].mode && as.ops[o].tied >= 0 && as.ops[o].tied < as.nops) {
                snprintf(t, sizeof t, "__simt_p[%d] = __simt_p[%d]; ", as.ops[o].tied, o);
                puts_(out, t);
            }
        }
    }
    puts_(out, as.call.s);
    if (!refused)
        for (int o = 0; o < as.nops; o++)
            if (as.ops[o].mode) {
                snprintf(t, sizeof t, " ::simt::ptx::put(__simt_o%d, __simt_p[%d]);", o, o);
                puts_(out, t);
            }
    puts_(out, " } while (0)");
    for (size_t c = i; c < close; c++)
        if (src[c] == '\n') puts_(out, in_define ? " \\\n" : "\n");
    free(text.s);
    free(as.call.s);
    as.call = (buf){0};
    return close + 1;
}

static int redirect_include(buf *out, size_t i, size_t e);

/* The rewrite of src[0, len) (read from path, which messages and #line
 * name) into out. Returns 0, or 1 where nvcc would refuse a call (each
 * reported on stderr); what it cannot read at all stops the program in
 * fail(). main() is this and the files around it; the fuzzing harness
 * (common/tests/fuzz/fuzz_rewrite.c) calls it directly, once per input:
 * each call starts from a cleared st. */
static int rewrite(buf *out)
{
    rewrite_reset();
    find_directives();
    if (check_execution_spaces() > 0) return 1;
    put_line_directive(out, 1);
    size_t i = 0, next_insert = 0;
    char *bound = NULL; /* a __launch_bounds__ waiting for its kernel's body */
    /* A #define's __launch_bounds__ waits only within the #define: a
     * kernel defined whole in the macro gets its check there, but one
     * that only names the bound (#define LB __launch_bounds__(256), or
     * LB(n), or KERNEL __global__ void __launch_bounds__(128)) writes it
     * where the macro is used, which this scan does not follow. Its check
     * would land in whatever body came next, a struct's or a host
     * function's, with the wrong bound or a name (n) not in scope. So that
     * bound is dropped at the #define's end, and the kernels that use the
     * macro are compiled as cuda_runtime.h defines __launch_bounds__, with
     * no check: a launch past such a bound runs here and fails on a GPU.
     * The bound waiting in the code while a #define is scanned is kept
     * aside meanwhile: neither a '{' nor a ';' of the #define is its. */
    char *code_bound = NULL;
    /* The #define being scanned as code ends at define_end; the scopes it
     * found open at its start are the code's, which it cannot close, and
     * the braces it leaves open close at its end. A macro's braces then
     * pair within it (a kernel defined whole in a macro is one), and one
     * that opens or closes a brace (#define BEGIN {) is left out of the
     * code's: the code that uses it shows the compiler a brace this scan
     * does not see, so a block opened so is not taken for a function body,
     * but the functions after it are still found at namespace scope. */
    size_t define_end = 0;
    int define_floor = 0;
    while (i < len) {
        if (define_end && i >= define_end) {
            if (st.nscopes > define_floor) st.nscopes = define_floor;
            define_end = 0;
            free(bound);
            bound = code_bound;
            code_bound = NULL;
        }
        while (next_insert < st.ninserts && st.inserts[next_insert].pos <= i)
            puts_(out, st.inserts[next_insert++].text);
        size_t k = skip_lexeme(i);
        if (k) {
            put(out, src + i, k);
            i += k;
            continue;
        }
        char c = src[i];
        size_t e;
        if (c == '#' && (e = directive_at(i)) != 0) {
            /* Copy directives through untouched, except #define, whose body
             * may hold a launch (#define LAUNCH(k) k<<<1, 32>>>()). */
            size_t kw = i + 1;
            while (kw < len && (src[kw] == ' ' || src[kw] == '\t')) kw++;
            if (!(strncmp(src + kw, "define", 6) == 0 && !is_ident(src[kw + 6]))) {
                if (!redirect_include(out, i, e)) put(out, src + i, e - i);
                i = e;
                continue;
            }
            define_end = e;
            define_floor = st.nscopes;
            code_bound = bound;
            bound = NULL;
        }
        if (c == '<' && strncmp(src + i, "<<<", 3) == 0) {
            st.changes++;
            i = rewrite_launch(out, i);
            continue;
        }
        if (c == 'e' && (i == 0 || !is_ident(src[i - 1])) && strncmp(src + i, "extern", 6) == 0 &&
            !is_ident(src[i + 6])) {
            size_t j = i + 6, l;
            while (j < len && (isspace((unsigned char)src[j]) || (src[j] == '/' && (l = skip_lexeme(j)))))
                j += isspace((unsigned char)src[j]) ? 1 : l; /* a comment may stand between the words */
            if (strncmp(src + j, "__shared__", 10) == 0 && !is_ident(src[j + 10])) {
                st.changes++;
                i = rewrite_extern_shared(out, i, j + 10);
                continue;
            }
        }
        if ((c == 'a' || c == '_') && (i == 0 || !is_ident(src[i - 1])) &&
            ((strncmp(src + i, "asm", 3) == 0 && !is_ident(src[i + 3])) ||
             (strncmp(src + i, "__asm__", 7) == 0 && !is_ident(src[i + 7])) ||
             (strncmp(src + i, "__asm", 5) == 0 && !is_ident(src[i + 5])))) {
            size_t next = rewrite_asm(out, i, define_end != 0);
            if (next) {
                st.changes++;
                i = next;
                continue;
            }
        }
        if (c == 's' && static_by_shared(i)) {
            st.changes++;
            puts_(out, "      ");
            i += 6;
            continue;
        }
        if (c == '_' && (i == 0 || !is_ident(src[i - 1])) && strncmp(src + i, "__shared__", 10) == 0 &&
            !is_ident(src[i + 10]) && in_function()) {
            size_t next = rewrite_static_shared(out, i);
            if (next) {
                st.changes++;
                i = next;
                continue;
            }
        }
        if (c == '_' && (i == 0 || !is_ident(src[i - 1])) && strncmp(src + i, "__launch_bounds__", 17) == 0 &&
            !is_ident(src[i + 17]) && !in_function()) {
            free(bound);
            bound = launch_bound(i);
        }
        if (c == ';' && bound && !in_function()) { /* a declaration, not the definition */
            free(bound);
            bound = NULL;
        }
        int counted = !unpaired_brace(i); /* see unpair_braces */
        int body = c == '{' && counted && bound && !in_function();
        if (c == '{' && counted) {
            if (st.nscopes < (int)sizeof(st.scopes)) st.scopes[st.nscopes] = brace_kind(out);
            st.nscopes++;
        }
        if (c == '}' && counted && st.nscopes > (define_end ? define_floor : 0)) st.nscopes--;
        put(out, &c, 1);
        i++;
        if (body) { /* the kernel's body: its first statement checks the launch */
            st.changes++;
            puts_(out, " simt_check_launch_bounds((unsigned long long)(");
            puts_(out, bound);
            puts_(out, "), __FILE__, __LINE__);");
            free(bound);
            bound = NULL;
        }
    }
    while (next_insert < st.ninserts) puts_(out, st.inserts[next_insert++].text);
    free(bound);
    free(code_bound);
    return 0;
}

/* --- the file's own headers ----------------------------------------------
 * nvcc compiles a header's launches, inline PTX and __shared__ variables as
 * it compiles the .cu file's; g++ would see them as they are written, and
 * stop at the first <<<. So with --headers DIR, the headers that the file
 * includes with #include "name", and those that they include, are read
 * too, found where the compiler finds them: in the including file's folder,
 * then the -iquote folders (simtcc's first is the .cu file's own folder),
 * then, after the emulator's include folder, the -I folders. Each header
 * whose rewrite changes it, or that includes one that is changed, gets a
 * rewritten copy, DIR/k/<its name>, whose #line names the header, and the
 * #include lines that name it name the copy (see choose_copies).
 * Left as they are: <name> includes (system and library headers), headers
 * found in the emulator's folder or in none of these, those under /usr
 * (the system's and the CUDA toolkit's, which nvcc compiles for the GPU
 * and the emulator does not run), and #include with a macro for its name.
 * DIR/map lists each copy and then its header, a line each, for simtcc to
 * name the headers, not the copies, in a dependency file. */

typedef struct {
    char *name;   /* as the compiler names it: the includer's folder, or the
                   * folder it was found in, and the name in the #include */
    char *real;   /* its realpath: the same header reached twice is one */
    char *text;
    size_t len;
    int own;      /* its rewrite changes it */
    int copied;   /* it gets a copy: own, or it includes a copied header */
    struct {
        size_t start, end; /* the #include directive, in text */
        size_t header;     /* the header it names, an index of hdrs.h */
        int here;          /* found in the includer's own folder */
    } *inc;
    size_t ninc, inc_cap;
} header_rec;

static struct {
    header_rec *h;
    size_t n, cap;
    const char **quote, **dirs; /* -iquote and -I folders, in order */
    size_t nquote, ndirs, quote_cap, dirs_cap;
    char *emulator;             /* realpath of the emulator's include folder */
    const char *out;            /* --headers DIR */
    int active;                 /* rewrite() redirects the includes of h[current] */
    size_t current;
} hdrs;

static char *join_path(const char *dir, const char *name, size_t n)
{
    int here = strcmp(dir, ".") == 0 || !*dir;
    size_t dn = here ? 0 : strlen(dir);
    char *p = malloc(dn + n + 2);
    if (!p) {
        perror("simt-rewrite");
        exit(2);
    }
    if (dn) {
        memcpy(p, dir, dn);
        if (dir[dn - 1] != '/') p[dn++] = '/';
    }
    memcpy(p + dn, name, n);
    p[dn + n] = 0;
    return p;
}

/* The folder part of a path: "." for a bare name. */
static char *folder_of(const char *p)
{
    const char *slash = strrchr(p, '/');
    if (!slash) return strdup(".");
    if (slash == p) return strdup("/");
    char *d = strndup(p, (size_t)(slash - p));
    if (!d) {
        perror("simt-rewrite");
        exit(2);
    }
    return d;
}

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Under folder dir (a realpath), or dir itself. */
static int under(const char *real, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(real, dir, n) == 0 && (real[n] == '/' || real[n] == 0 || (n && dir[n - 1] == '/'));
}

/* The index of the header at p (named name), added if it is new, or
 * (size_t)-1 where it is left as it is. */
static size_t header_at(const char *p, const char *name)
{
    char *real = realpath(p, NULL);
    if (!real) return (size_t)-1;
    if ((hdrs.emulator && under(real, hdrs.emulator)) || under(real, "/usr")) {
        free(real);
        return (size_t)-1;
    }
    for (size_t k = 0; k < hdrs.n; k++)
        if (strcmp(hdrs.h[k].real, real) == 0) {
            free(real);
            return k;
        }
    hdrs.h = grow(hdrs.h, &hdrs.cap, hdrs.n, sizeof(*hdrs.h));
    header_rec *r = &hdrs.h[hdrs.n];
    memset(r, 0, sizeof(*r));
    r->real = real;
    r->name = strdup(name);
    r->text = read_file(p, &r->len);
    if (!r->name || !r->text) {
        perror(p);
        exit(2);
    }
    return hdrs.n++;
}

/* The header an #include "name" of file k names, as the compiler searches
 * for it; sets *here where it is in file k's own folder. */
static size_t find_header(size_t k, const char *name, size_t n, int *here)
{
    *here = 0;
    if (n == 0 || memchr(name, 0, n) || memchr(name, '\n', n)) return (size_t)-1;
    /* The path, which is also the name the compiler shows. */
    char *found;
    if (name[0] == '/') {
        found = strndup(name, n);
    } else {
        char *dir = folder_of(hdrs.h[k].name);
        found = join_path(dir, name, n);
        free(dir);
        *here = is_file(found);
    }
    if (!found) {
        perror("simt-rewrite");
        exit(2);
    }
    /* Else -iquote, the emulator's folder (where the search ends, with the
     * header left alone), then -I. */
    for (size_t d = 0; name[0] != '/' && !*here && d < hdrs.nquote + 1 + hdrs.ndirs; d++) {
        const char *in = d < hdrs.nquote    ? hdrs.quote[d]
                         : d == hdrs.nquote ? hdrs.emulator
                                            : hdrs.dirs[d - hdrs.nquote - 1];
        if (!in) continue;
        free(found);
        found = join_path(in, name, n);
        if (is_file(found)) {
            if (d == hdrs.nquote) break;
            size_t h = header_at(found, found);
            free(found);
            return h;
        }
    }
    size_t h = *here || (name[0] == '/' && is_file(found)) ? header_at(found, found) : (size_t)-1;
    free(found);
    return h;
}

/* The #include "name" lines of file k (whose directives rewrite() found). */
static void find_includes(size_t k)
{
    for (size_t d = 0; d < st.ndirs; d++) {
        size_t i = st.dirs[d].start + 1, e = st.dirs[d].end;
        while (i < e && (src[i] == ' ' || src[i] == '\t')) i++;
        if (!(e - i > 7 && strncmp(src + i, "include", 7) == 0 && !is_ident(src[i + 7]))) continue;
        i += 7;
        while (i < e && (src[i] == ' ' || src[i] == '\t')) i++;
        if (i >= e || src[i] != '"') continue;
        size_t b = ++i;
        while (i < e && src[i] != '"') i++;
        if (i >= e) continue;
        int here;
        size_t h = find_header(k, src + b, i - b, &here);
        if (h == (size_t)-1) continue;
        header_rec *r = &hdrs.h[k]; /* after find_header, which may move hdrs.h */
        r->inc = grow(r->inc, &r->inc_cap, r->ninc, sizeof(*r->inc));
        r->inc[r->ninc].start = st.dirs[d].start;
        r->inc[r->ninc].end = e;
        r->inc[r->ninc].header = h;
        r->inc[r->ninc++].here = here;
    }
}

/* In a rewrite with redirection: an #include of a header that has a copy
 * names the copy. The line breaks of a
 * directive over several lines follow it, so that the lines keep their
 * numbers. Returns 0 where the directive is copied as it is. */
static int redirect_include(buf *out, size_t i, size_t e)
{
    if (!hdrs.active) return 0;
    const header_rec *r = &hdrs.h[hdrs.current];
    for (size_t k = 0; k < r->ninc; k++) {
        size_t h = r->inc[k].header;
        if (r->inc[k].start != i || h == 0 || !hdrs.h[h].copied) continue;
        char num[32];
        snprintf(num, sizeof num, "/%zu/", h);
        const char *base = strrchr(hdrs.h[h].real, '/');
        puts_(out, "#include \"");
        puts_(out, hdrs.out);
        puts_(out, num);
        puts_(out, base ? base + 1 : hdrs.h[h].real);
        puts_(out, "\"");
        for (size_t j = i; j < e; j++)
            if (src[j] == '\n') puts_(out, "\n");
        return 1;
    }
    return 0;
}

/* Rewrites file k into out (a redirecting rewrite where redirect is set):
 * 0, or 1 where nvcc would refuse a call. */
static int rewrite_header(size_t k, buf *out, int redirect)
{
    src = hdrs.h[k].text;
    len = hdrs.h[k].len;
    path = hdrs.h[k].name;
    hdrs.active = redirect;
    hdrs.current = k;
    across.file = k;
    out->n = 0;
    return rewrite(out);
}

static int write_file(const char *p, const buf *b)
{
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(b->s, 1, b->n, f) != b->n || fclose(f) != 0) {
        perror(p);
        return 2;
    }
    return 0;
}

/* Which headers get a copy: those that change; those that include a
 * copied header, whose #include then names the copy; and those that a
 * copied header found in its own folder, which the copy's folder would
 * not find. Repeated until nothing changes, which also settles headers
 * that include each other. The .cu file is rewritten anyway, and finds
 * the headers of its own folder through simtcc's -iquote. */
static void choose_copies(void)
{
    for (size_t k = 1; k < hdrs.n; k++) hdrs.h[k].copied = hdrs.h[k].own;
    for (int more = 1; more;) {
        more = 0;
        for (size_t k = 0; k < hdrs.n; k++) {
            header_rec *r = &hdrs.h[k];
            for (size_t j = 0; j < r->ninc; j++) {
                header_rec *h = &hdrs.h[r->inc[j].header];
                if (r->inc[j].header == 0) continue;
                if (k != 0 && !r->copied && h->copied) r->copied = more = 1;
                if (k != 0 && r->copied && r->inc[j].here && !h->copied) h->copied = more = 1;
            }
        }
    }
}

/* The file into out_path, and with --headers its headers: 0, 1 (errors
 * reported on stderr) or 2 (a file that cannot be read or written). */
static int rewrite_all(const char *in, const char *out_path)
{
    hdrs.h = grow(hdrs.h, &hdrs.cap, 0, sizeof(*hdrs.h));
    header_rec *m = &hdrs.h[0];
    memset(m, 0, sizeof(*m));
    m->name = strdup(in);
    m->text = read_file(in, &m->len);
    if (!m->text || !m->name) {
        perror(in);
        return 2;
    }
    m->real = realpath(in, NULL);
    if (!m->real) m->real = strdup(in);
    hdrs.n = 1;
    buf out = {0};
    if (!hdrs.out) return rewrite_header(0, &out, 0) ? 1 : write_file(out_path, &out);
    if (strpbrk(hdrs.out, "\"\n")) {
        fprintf(stderr, "simt-rewrite: --headers %s: a folder whose name holds a quote or a line break cannot be named in an #include\n", hdrs.out);
        return 2;
    }
    /* The file and every header it reaches, once each (hdrs.n grows). */
    int errors = 0;
    across.first = 1;
    for (size_t k = 0; k < hdrs.n; k++) {
        errors |= rewrite_header(k, &out, 0);
        hdrs.h[k].own = st.changes > 0;
        find_includes(k);
    }
    if (errors) return 1;
    /* A header whose kernel template another file launches, its template
     * arguments left to deduce, gets the helper, and so a copy. */
    for (size_t k = 0; k < across.nkernels; k++) {
        const char *kn = across.kernels[k].name;
        for (size_t w = 0; w < across.nwanted && across.kernels[k].ok; w++)
            if (strcmp(across.wanted[w], kn) == 0) hdrs.h[across.kernels[k].file].own = 1;
    }
    across.first = 0;
    choose_copies();
    buf map = {0};
    for (size_t k = 1; k < hdrs.n; k++) {
        if (!hdrs.h[k].copied) continue;
        char num[32];
        snprintf(num, sizeof num, "%zu", k);
        char *dir = join_path(hdrs.out, num, strlen(num));
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            perror(dir);
            return 2;
        }
        const char *base = strrchr(hdrs.h[k].real, '/');
        base = base ? base + 1 : hdrs.h[k].real;
        char *copy = join_path(dir, base, strlen(base));
        free(dir);
        if (rewrite_header(k, &out, 1)) return 1;
        if (write_file(copy, &out)) return 2;
        puts_(&map, copy);
        puts_(&map, "\n");
        puts_(&map, hdrs.h[k].name);
        puts_(&map, "\n");
        free(copy);
    }
    char *mp = join_path(hdrs.out, "map", 3);
    if (!map.s) put(&map, "", 0);
    int bad = write_file(mp, &map);
    free(mp);
    free(map.s);
    if (bad) return 2;
    if (rewrite_header(0, &out, 1)) return 1;
    return write_file(out_path, &out);
}

int main(int argc, char **argv)
{
    const char *usage = "usage: simt-rewrite [--headers DIR [--emulator-include DIR] [-iquote DIR]... [-I DIR]...] input.cu output.cpp\n";
    int a = 1;
    for (; a < argc && argv[a][0] == '-'; a += 2) {
        if (a + 1 >= argc) {
            fputs(usage, stderr);
            return 2;
        }
        const char *v = argv[a + 1];
        if (strcmp(argv[a], "--headers") == 0) {
            hdrs.out = v;
        } else if (strcmp(argv[a], "--emulator-include") == 0) {
            hdrs.emulator = realpath(v, NULL);
        } else if (strcmp(argv[a], "-iquote") == 0) {
            hdrs.quote = grow(hdrs.quote, &hdrs.quote_cap, hdrs.nquote, sizeof(*hdrs.quote));
            hdrs.quote[hdrs.nquote++] = v;
        } else if (strcmp(argv[a], "-I") == 0) {
            hdrs.dirs = grow(hdrs.dirs, &hdrs.dirs_cap, hdrs.ndirs, sizeof(*hdrs.dirs));
            hdrs.dirs[hdrs.ndirs++] = v;
        } else {
            fputs(usage, stderr);
            return 2;
        }
    }
    if (argc - a != 2) {
        fputs(usage, stderr);
        return 2;
    }
    return rewrite_all(argv[a], argv[a + 1]);
}
