/*
 * simt-rewrite: turns a .cu file into C++ that the host compiler accepts,
 * for the SIMT emulator. simtcc runs it before g++; students never call it.
 *
 * It makes exactly two rewrites; everything else is copied byte for byte,
 * and line breaks are kept so that compiler messages and gdb point at the
 * student's own lines (a #line directive names the original file):
 *   name<<<grid, block, shmem, stream>>>(args)
 *       -> ::simt::launch(::simt::LaunchConfig(grid, block, shmem, stream), name)(args)
 *   extern __shared__ T name[];
 *       -> T *const name = (T *)simt_dynamic_shared();            inside a function
 *       -> static const ::simt::DynShared<T> name;                  at namespace scope
 * Comments, string and character literals are skipped. It is a scanner, not
 * a parser: a launch must name its kernel with an identifier, a qualified
 * name or a template-id (kernel<128>), which covers the course's code.
 *
 * Usage: simt-rewrite input.cu output.cpp
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const char *src;
static size_t len;
static const char *path;

static int line_of(size_t pos)
{
    int l = 1;
    for (size_t i = 0; i < pos && i < len; i++) l += src[i] == '\n';
    return l;
}

static void fail(size_t pos, const char *what)
{
    fprintf(stderr, "%s:%d: error: simt-rewrite: %s\n", path, line_of(pos), what);
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
        const char *e = strstr(src + i + 2, "*/");
        return e ? (size_t)(e + 2 - (src + i)) : len - i;
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

/* From i (just after an opening bracket), find the index of the closer that
 * ends it at depth 0; the closer is ")" or ">>>". */
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
        char c = src[i];
        if (depth == 0 && strncmp(src + i, closer, cl) == 0) return i;
        if (c == '(' || c == '[' || c == '{') depth++;
        if (c == ')' || c == ']' || c == '}') depth--;
        if (depth < 0) return (size_t)-1;
        i++;
    }
    return (size_t)-1;
}

/* Scope tracking: is the innermost enclosing brace a function body (or a
 * block within one), or namespace-like (namespace, extern "C")? */
static char scopes[4096];
static int nscopes;

static int in_function(void)
{
    int n = nscopes < (int)sizeof(scopes) ? nscopes : (int)sizeof(scopes);
    for (int i = 0; i < n; i++)
        if (scopes[i] == 'f') return 1;
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
    if (strstr(tmp, "namespace") || strstr(tmp, "extern \"C\"") || strstr(tmp, "extern \"C++\"")) return 'n';
    if (strstr(tmp, "struct") || strstr(tmp, "class") || strstr(tmp, "union") || strstr(tmp, "enum")) return 's';
    if (e > 0 && (out->s[e - 1] == '=' || out->s[e - 1] == ',' || out->s[e - 1] == '(')) return 'i';
    return 'f';
}

/* name<<<cfg>>>(args): the name is already in out; take it back. */
static size_t rewrite_launch(buf *out, size_t i)
{
    size_t e = out->n;
    while (e > 0 && isspace((unsigned char)out->s[e - 1])) e--;
    size_t b = e;
    if (b > 0 && out->s[b - 1] == '>') { /* template-id: kernel<...> */
        int depth = 0;
        while (b > 0) {
            char c = out->s[--b];
            if (c == '>') depth++;
            if (c == '<' && --depth == 0) break;
        }
    }
    while (b > 0 && (is_ident(out->s[b - 1]) || out->s[b - 1] == ':')) b--;
    if (b == e) fail(i, "a kernel launch <<<...>>> must follow the kernel's name");
    char *name = strndup(out->s + b, e - b);
    out->n = b;
    out->s[b] = 0;

    size_t cfg_start = i + 3, cfg_end = find_close(cfg_start, ">>>");
    if (cfg_end == (size_t)-1) fail(i, "unterminated <<<...>>> launch configuration");
    size_t j = cfg_end + 3, gap_lines = 0;
    while (j < len && isspace((unsigned char)src[j])) gap_lines += src[j++] == '\n';
    if (j >= len || src[j] != '(') fail(i, "expected (arguments) after <<<...>>>");
    size_t args_start = j + 1, args_end = find_close(args_start, ")");
    if (args_end == (size_t)-1) fail(i, "unterminated kernel argument list");

    puts_(out, "::simt::launch(::simt::LaunchConfig(");
    put(out, src + cfg_start, cfg_end - cfg_start);
    puts_(out, "), ");
    puts_(out, name);
    puts_(out, ")(");
    put(out, src + args_start, args_end - args_start);
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

/* extern __shared__ decl; -- i points at "extern". */
static size_t rewrite_extern_shared(buf *out, size_t i, size_t after_kw)
{
    size_t semi = after_kw;
    while (semi < len && src[semi] != ';') semi++;
    if (semi >= len) fail(i, "unterminated extern __shared__ declaration");
    size_t lb = semi;
    while (lb > after_kw && src[lb] != '[') lb--;
    if (src[lb] != '[') fail(i, "extern __shared__ must declare an array: extern __shared__ T name[];");
    size_t ne = lb;
    while (ne > after_kw && isspace((unsigned char)src[ne - 1])) ne--;
    size_t nb = ne;
    while (nb > after_kw && is_ident(src[nb - 1])) nb--;
    if (nb == ne) fail(i, "cannot find the name in an extern __shared__ declaration");
    char *type = strndup(src + after_kw, nb - after_kw);
    char *name = strndup(src + nb, ne - nb);
    /* Keep the line count: newlines inside the declaration go after it. */
    int nl = 0;
    for (size_t k = i; k < semi; k++) nl += src[k] == '\n';
    for (char *t = type; *t; t++)
        if (*t == '\n') *t = ' ';
    strip_alignment(type);
    if (in_function()) {
        puts_(out, type);
        puts_(out, " *const ");
        puts_(out, name);
        puts_(out, " = (");
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

/* __shared__ decl; inside a function -- i points at "__shared__". The
 * declaration is copied as it is, followed on the same line by a call that
 * fills the variable with 0xff bytes the first time a thread of the block
 * gets there (simt_shared_first_use): a thread-local static would
 * otherwise start as zeros, a luck no GPU gives. Declarations this cannot
 * name (several declarators) are copied without the call. Returns the
 * index after the ';', or 0 to leave the text to the caller. */
static size_t rewrite_static_shared(buf *out, size_t i)
{
    size_t semi = find_close(i, ";");
    if (semi == (size_t)-1) return 0;
    /* The name: the identifier before the first '[' outside parentheses
     * (past __align__(16) and the like), or before the ';'. */
    size_t end = semi;
    int depth = 0;
    for (size_t k = i; k < semi; k++) {
        if (src[k] == '(') depth++;
        if (src[k] == ')') depth--;
        if (depth == 0 && (src[k] == ',' || src[k] == '=' || src[k] == '{')) return 0;
        if (depth == 0 && src[k] == '[' && end == semi) end = k;
    }
    while (end > i && isspace((unsigned char)src[end - 1])) end--;
    size_t nb = end;
    while (nb > i && is_ident(src[nb - 1])) nb--;
    if (nb == end || nb <= i + 10 || isdigit((unsigned char)src[nb])) return 0;
    put(out, src + i, semi + 1 - i);
    puts_(out, " simt_shared_first_use(&");
    put(out, src + nb, end - nb);
    puts_(out, ", sizeof(");
    put(out, src + nb, end - nb);
    puts_(out, "));");
    return semi + 1;
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

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: simt-rewrite input.cu output.cpp\n");
        return 2;
    }
    path = argv[1];
    src = read_file(path, &len);
    if (!src) {
        perror(path);
        return 2;
    }
    buf out = {0};
    puts_(&out, "#line 1 \"");
    for (const char *p = path; *p; p++) {
        if (*p == '"' || *p == '\\') puts_(&out, "\\");
        put(&out, p, 1);
    }
    puts_(&out, "\"\n");
    size_t i = 0;
    while (i < len) {
        size_t k = skip_lexeme(i);
        if (k) {
            put(&out, src + i, k);
            i += k;
            continue;
        }
        char c = src[i];
        if (c == '#' ) { /* preprocessor line: copy through, with continuations */
            size_t j = i;
            int at_line_start = 1;
            for (size_t b = i; b > 0 && src[b - 1] != '\n'; b--)
                if (!isspace((unsigned char)src[b - 1])) at_line_start = 0;
            /* Copy directives through untouched, except #define, whose body
             * may hold a launch (#define LAUNCH(k) k<<<1, 32>>>()). */
            size_t kw = i + 1;
            while (kw < len && (src[kw] == ' ' || src[kw] == '\t')) kw++;
            if (at_line_start && strncmp(src + kw, "define", 6) != 0) {
                while (j < len && src[j] != '\n') {
                    if (src[j] == '\\' && j + 1 < len && src[j + 1] == '\n') j++;
                    else if ((k = skip_lexeme(j)) && src[j] != '\'') { j += k; continue; }
                    j++;
                }
                put(&out, src + i, j - i);
                i = j;
                continue;
            }
        }
        if (c == '<' && strncmp(src + i, "<<<", 3) == 0) {
            i = rewrite_launch(&out, i);
            continue;
        }
        if (c == 'e' && (i == 0 || !is_ident(src[i - 1])) && strncmp(src + i, "extern", 6) == 0 &&
            !is_ident(src[i + 6])) {
            size_t j = i + 6;
            while (j < len && isspace((unsigned char)src[j])) j++;
            if (strncmp(src + j, "__shared__", 10) == 0 && !is_ident(src[j + 10])) {
                i = rewrite_extern_shared(&out, i, j + 10);
                continue;
            }
        }
        if (c == '_' && (i == 0 || !is_ident(src[i - 1])) && strncmp(src + i, "__shared__", 10) == 0 &&
            !is_ident(src[i + 10]) && in_function()) {
            size_t next = rewrite_static_shared(&out, i);
            if (next) {
                i = next;
                continue;
            }
        }
        if (c == '{') {
            if (nscopes < (int)sizeof(scopes)) scopes[nscopes] = brace_kind(&out);
            nscopes++;
        }
        if (c == '}' && nscopes > 0) nscopes--;
        put(&out, &c, 1);
        i++;
    }
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(out.s, 1, out.n, f) != out.n || fclose(f) != 0) {
        perror(argv[2]);
        return 2;
    }
    return 0;
}
