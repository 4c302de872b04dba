/* CoCoder's native reader of a Python module: what the dependency graph needs of one file, without
 * building Python's syntax tree (environments/cocoder/nativereader.py says how it is used).
 *
 * read(source: bytes) -> (interfaces, work, imports) or a str saying why it does not vouch for the
 * file (then the caller reads it with ast, as before):
 *   interfaces: [(name, text)] in the order facts._interfaces_and_work assigns them (top-level defs
 *               and classes with their signatures, every Name of a top-level assignment's targets);
 *   work:       the paper's work estimate, as facts._interfaces_and_work counts it;
 *   imports:    [(level, module or None, names or None, bound, local, type_only)] in the order
 *               facts._imports walks the statements (a try's handlers after its else and finally).
 * Signature text is ast.unparse's (CPython 3.11 Lib/ast.py), written here for a subset of
 * expressions: names, attributes, subscripts, calls, constants (written by Python's own repr),
 * lists, tuples, sets, dicts, starred, arithmetic, boolean operators, comparisons, `if`
 * expressions and lambdas. Anything else (a comprehension, a slice, an f-string, a tab in an
 * indentation, a form feed, a named escape) makes the whole file "unsure". The text is tokenised as Python's tokenizer does (strings, comments,
 * brackets, continuation lines, indentation); statements other than the headers, imports and
 * top-level assignment targets are not parsed, so a syntax error inside them is not seen here (as
 * inside the bodies the skeleton blanks). Built by scripts/build-native; nothing links against it.
 * One file over the project's ~400 lines on purpose: one translation unit, one cc call, no headers
 * (the tokenizer, the expression reader and writer, the statement walk share the reader's state). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

enum { T_NAME = 1, T_NUMBER, T_STRING, T_OP };
typedef struct { int kind, start, end, line, eline, depth; } Tok;

typedef struct { char *p; Py_ssize_t n, cap; } Buf;

static void buf_grow(Buf *b, Py_ssize_t need) {
    if (b->n + need <= b->cap) return;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + need) cap *= 2;
    char *p = realloc(b->p, (size_t)cap);
    if (!p) abort();
    b->p = p;
    b->cap = cap;
}
static void buf_add(Buf *b, const char *s, Py_ssize_t n) { if (n <= 0) return; buf_grow(b, n); memcpy(b->p + b->n, s, (size_t)n); b->n += n; }
static void buf_str(Buf *b, const char *s) { buf_add(b, s, (Py_ssize_t)strlen(s)); }
static inline void buf_ch(Buf *b, char c) { if (b->n >= b->cap) buf_grow(b, 1); b->p[b->n++] = c; }

#define GROW(arr, n, cap, type) do { if ((n) >= (cap)) { (cap) = (cap) ? (cap) * 2 : 256; \
    (arr) = realloc((arr), sizeof(type) * (size_t)(cap)); if (!(arr)) abort(); } } while (0)

/* expression nodes */
enum { N_NAME = 1, N_CONST, N_ATTR, N_SUB, N_CALL, N_KEYWORD, N_STARRED, N_TUPLE, N_LIST, N_SET, N_DICT,
       N_BINOP, N_UNARY, N_NOT, N_BOOLOP, N_COMPARE, N_IFEXP, N_LAMBDA, N_PARAM };
typedef struct {
    int kind, op;       /* op: an index into OPS for N_BINOP / N_UNARY */
    int a, b;           /* children: value/left/func/operand, slice/right */
    int ls, ln;         /* a list of children in kids[] (elts, args, dict keys) */
    int ls2, ln2;       /* a second list (call keywords, dict values) */
    int toff, tlen;     /* N_NAME, N_ATTR, N_KEYWORD: the name in the source; N_CONST: its text in R.hb */
    int is_int;         /* N_CONST holding an int */
    int c;              /* N_IFEXP: orelse (a: body, b: test) */
} Node;

/* precedences of Lib/ast.py's _Precedence */
enum { P_NAMED = 1, P_TUPLE, P_YIELD, P_TEST, P_OR, P_AND, P_NOT, P_CMP, P_EXPR, P_BXOR, P_BAND, P_SHIFT,
       P_ARITH, P_TERM, P_FACTOR, P_POWER, P_AWAIT, P_ATOM };
#define P_BOR P_EXPR

typedef struct { int sig_head_off, sig_head_len; int doc_off, doc_len; int next_method; } Sig;
typedef struct { int bases_off, bases_len; int first_method, last_method, nmethods; int name_off, name_len; } Klass;
enum { E_TEXT, E_DEF, E_CLASS };
typedef struct { int name_off, name_len, type, idx, text_off, text_len; } Entry;
typedef struct { int is_from, level, mod_off, mod_len, names_start, nnames, bound_off, bound_len, local, tc; } Imp;
typedef struct { int off, len; } Span;

enum { B_MODULE, B_TOPCLASS, B_DEF, B_OTHER, B_MATCH };
enum { C_NONE, C_TRY, C_IF, C_LOOP, C_OTHER };
#define MAX_SEGS 128
typedef struct {
    int indent, kind, local, tc, klass;
    int last;                                  /* the last compound statement at this level */
    int try_start, nseg, seg_kind[MAX_SEGS], seg_start[MAX_SEGS];   /* seg_kind: 0 except, 1 else, 2 finally */
} Block;

typedef struct {
    const char *s;
    Py_ssize_t n, p;
    int line;
    const char *unsure;
    jmp_buf jb;
    Tok *toks; int ntok, ctok;
    Node *nodes; int nnode, cnode;
    int *kids; int nkid, ckid;
    Buf hb, ob, sb, db;           /* text pieces kept; one unparse's output; a string's value; a docstring's */
    Sig *sigs; int nsig, csig;
    Klass *klasses; int nklass, cklass;
    Entry *entries; int nentry, centry;
    Imp *imps; int nimp, cimp;
    Span *names; int nname, cname;
    Span *triples; int ntriple, ctriple;  /* every triple-quoted string: (offset of its quotes, length) */
    int ascii;
    Block *blocks; int nblock, cblock;
    int *line_starts; int nlines, clines;
    long work;
    /* a block opened by a header whose body starts on the next line */
    int pend, pend_kind, pend_local, pend_tc, pend_klass, pend_sig;
} R;

static R G;  /* one reader, reused: the GIL is held throughout a call */

static void unsure(R *r, const char *why) {
#ifdef READER_DEBUG
    fprintf(stderr, "line %d: %s\n", r->line, why);
#endif
    r->unsure = why;
    longjmp(r->jb, 1);
}

/* ------------------------------------------------------------------------------------------ */
/* the tokenizer: one logical line at a time                                                  */

static int is_name_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_name_char(unsigned char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }


/* the length of the operator at s[i] (0: none), longest first */
static int op_len(const char *s, Py_ssize_t i, Py_ssize_t n) {
    char c = s[i], d = i + 1 < n ? s[i + 1] : 0, e = i + 2 < n ? s[i + 2] : 0;
    switch (c) {
    case '(': case ')': case '[': case ']': case '{': case '}': case ',': case ';': case '~': return 1;
    case '.': return d == '.' && e == '.' ? 3 : 1;
    case ':': return d == '=' ? 2 : 1;
    case '-': return d == '>' || d == '=' ? 2 : 1;
    case '*': case '/': case '<': case '>':
        if (d == c) return e == '=' ? 3 : 2;
        if (d == '=') return 2;
        return 1;
    case '+': case '%': case '&': case '|': case '^': case '@': case '=': return d == '=' ? 2 : 1;
    case '!': return d == '=' ? 2 : 0;
    }
    return 0;
}

static void add_tok(R *r, int kind, Py_ssize_t start, Py_ssize_t end, int line, int eline, int depth) {
    GROW(r->toks, r->ntok, r->ctok, Tok);
    Tok *t = &r->toks[r->ntok++];
    t->kind = kind; t->start = (int)start; t->end = (int)end; t->line = line; t->eline = eline; t->depth = depth;
}

static void new_line(R *r, Py_ssize_t at) {
    GROW(r->line_starts, r->nlines, r->clines, int);
    r->line_starts[r->nlines++] = (int)at;
    r->line++;
}

/* a string token from the prefix at p; returns its end */
static Py_ssize_t scan_string(R *r, Py_ssize_t p, Py_ssize_t q) {
    const char *s = r->s;
    char quote = s[q];
    int triple = q + 2 < r->n && s[q + 1] == quote && s[q + 2] == quote;
    Py_ssize_t i = q + (triple ? 3 : 1);
    (void)p;
    for (;;) {
        if (i >= r->n) unsure(r, "unclosed string");
        if (triple && s[i] == quote && i + 2 < r->n && s[i + 1] == quote && s[i + 2] == quote) {
            GROW(r->triples, r->ntriple, r->ctriple, Span);
            r->triples[r->ntriple].off = (int)q;
            r->triples[r->ntriple].len = (int)(i + 3 - q);
            r->ntriple++;
            return i + 3;
        }
        char c = s[i];
        if (c == '\\') {
            if (i + 1 >= r->n) unsure(r, "unclosed string");
            if (s[i + 1] == '\n') new_line(r, i + 2);
            i += 2;
            continue;
        }
        if (c == '\n') {
            if (!triple) unsure(r, "a line break in a one-line string");
            new_line(r, i + 1);
            i++;
            continue;
        }
        if (c == quote) {
            if (!triple) return i + 1;
            if (i + 2 < r->n && s[i + 1] == quote && s[i + 2] == quote) return i + 3;
        }
        i++;
    }
}

/* the tokens of the next logical line into r->toks; returns 0 at the end of the file. *indent is
 * the column of its first token. */
static int next_logical_line(R *r, int *indent) {
    const char *s = r->s;
    r->ntok = 0;
    for (;;) {  /* skip blank and comment-only lines, measure the indentation */
        if (r->p >= r->n) return 0;
        Py_ssize_t i = r->p;
        int col = 0, tab = 0;
        while (i < r->n && (s[i] == ' ' || s[i] == '\t')) { if (s[i] == '\t') tab = 1; col++; i++; }
        if (i >= r->n) { r->p = i; return 0; }
        if (s[i] == '#') { while (i < r->n && s[i] != '\n') i++; }
        if (i >= r->n) { r->p = i; return 0; }
        if (s[i] == '\n') { r->p = i + 1; new_line(r, r->p); continue; }
        if (tab) unsure(r, "a tab in an indentation");
        if (s[i] == '\\') unsure(r, "a line that starts with a continuation");
        *indent = col;
        r->p = i;
        break;
    }
    int depth = 0;
    char stack[256];
    Py_ssize_t i = r->p;
    for (;;) {
        if (i >= r->n) {
            if (depth) unsure(r, "unclosed bracket");
            r->p = i;
            return 1;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t') { i++; continue; }
        if (c == '#') { while (i < r->n && s[i] != '\n') i++; continue; }
        if (c == '\n') {
            new_line(r, i + 1);
            i++;
            if (depth == 0) { r->p = i; return 1; }
            continue;
        }
        if (c == '\\') {
            if (i + 1 < r->n && s[i + 1] == '\n') { new_line(r, i + 2); i += 2; continue; }
            unsure(r, "a stray backslash");
        }
        int line = r->line;
        if (is_name_start(c)) {
            Py_ssize_t j = i;
            while (j < r->n && is_name_char((unsigned char)s[j])) j++;
            if (j < r->n && ((unsigned char)s[j]) >= 0x80) unsure(r, "a non-ASCII name");
            if (j < r->n && (s[j] == '"' || s[j] == '\'') && j - i <= 2) {
                int ok = 1;
                for (Py_ssize_t k = i; k < j; k++) if (!strchr("rRbBuUfF", s[k])) ok = 0;
                if (ok) {
                    Py_ssize_t e = scan_string(r, i, j);
                    add_tok(r, T_STRING, i, e, line, r->line, depth);
                    i = e;
                    continue;
                }
            }
            add_tok(r, T_NAME, i, j, line, line, depth);
            i = j;
            continue;
        }
        if (c >= 0x80) unsure(r, "a non-ASCII character outside strings and comments");
        if (c == '"' || c == '\'') {
            Py_ssize_t e = scan_string(r, i, i);
            add_tok(r, T_STRING, i, e, line, r->line, depth);
            i = e;
            continue;
        }
        if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < r->n && s[i + 1] >= '0' && s[i + 1] <= '9')) {
            Py_ssize_t j = i;
            if (c == '0' && j + 1 < r->n && strchr("xXoObB", s[j + 1])) {
                j += 2;
                while (j < r->n && (isxdigit((unsigned char)s[j]) || s[j] == '_')) j++;
            } else {
                while (j < r->n) {
                    char d = s[j];
                    if ((d >= '0' && d <= '9') || d == '_' || d == '.' || d == 'j' || d == 'J') { j++; continue; }
                    if ((d == 'e' || d == 'E')) {
                        j++;
                        if (j < r->n && (s[j] == '+' || s[j] == '-')) j++;
                        continue;
                    }
                    break;
                }
            }
            if (j < r->n && is_name_char((unsigned char)s[j])) unsure(r, "a number this reading does not know");
            add_tok(r, T_NUMBER, i, j, line, line, depth);
            i = j;
            continue;
        }
        /* operators */
        int len = op_len(s, i, r->n);
        if (!len) unsure(r, "a character this reading does not know");
        if (len == 1 && (c == '(' || c == '[' || c == '{')) {
            add_tok(r, T_OP, i, i + 1, line, line, depth);
            if (depth >= 255) unsure(r, "brackets nested too deep");
            stack[depth++] = (char)c;
            i++;
            continue;
        }
        if (len == 1 && (c == ')' || c == ']' || c == '}')) {
            char want = c == ')' ? '(' : c == ']' ? '[' : '{';
            if (!depth || stack[depth - 1] != want) unsure(r, "unbalanced brackets");
            depth--;
        }
        add_tok(r, T_OP, i, i + len, line, line, depth);
        i += len;
    }
}

/* ------------------------------------------------------------------------------------------ */
static inline int tok_is_n(R *r, int k, const char *text, int n) {
    if (k >= r->ntok) return 0;
    Tok *t = &r->toks[k];
    return t->end - t->start == n && (t->kind == T_OP || t->kind == T_NAME) && r->s[t->start] == text[0]
           && !memcmp(r->s + t->start, text, (size_t)n);
}
static int tok_is(R *r, int k, const char *text) { return tok_is_n(r, k, text, (int)strlen(text)); }
#define tok_is(r, k, text) tok_is_n((r), (k), ("" text), (int)(sizeof(text) - 1))  /* literals only */
static int tok_name(R *r, int k) { return k < r->ntok && r->toks[k].kind == T_NAME; }

static const char *KEYWORDS[] = {"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
    "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in",
    "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", NULL};
static int is_keyword(R *r, int k) {
    Tok *t = &r->toks[k];
    int n = t->end - t->start;
    for (int i = 0; KEYWORDS[i]; i++)
        if ((int)strlen(KEYWORDS[i]) == n && !memcmp(r->s + t->start, KEYWORDS[i], (size_t)n)) return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* string values                                                                              */

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
static void put_utf8(R *r, Buf *b, unsigned long cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) unsure(r, "a surrogate escape");
    if (cp < 0x80) buf_ch(b, (char)cp);
    else if (cp < 0x800) { buf_ch(b, (char)(0xC0 | (cp >> 6))); buf_ch(b, (char)(0x80 | (cp & 0x3F))); }
    else if (cp < 0x10000) {
        buf_ch(b, (char)(0xE0 | (cp >> 12))); buf_ch(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        buf_ch(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp <= 0x10FFFF) {
        buf_ch(b, (char)(0xF0 | (cp >> 18))); buf_ch(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        buf_ch(b, (char)(0x80 | ((cp >> 6) & 0x3F))); buf_ch(b, (char)(0x80 | (cp & 0x3F)));
    } else unsure(r, "an escape beyond unicode");
}

enum { S_PLAIN = 0, S_RAW = 1, S_BYTES = 2, S_FMT = 4, S_U = 8 };
static int string_flags(R *r, Tok *t) {
    int f = 0;
    for (int i = t->start; r->s[i] != '"' && r->s[i] != '\''; i++) {
        char c = r->s[i];
        if (c == 'r' || c == 'R') f |= S_RAW;
        else if (c == 'b' || c == 'B') f |= S_BYTES;
        else if (c == 'f' || c == 'F') f |= S_FMT;
        else if (c == 'u' || c == 'U') f |= S_U;
    }
    return f;
}

/* append the value of a (non-f) string token to b, as UTF-8 */
static void string_value(R *r, Tok *t, Buf *b) {
    const char *s = r->s;
    int i = t->start;
    while (s[i] != '"' && s[i] != '\'') i++;
    int flags = string_flags(r, t);
    int triple = t->end - i >= 6 && s[i + 1] == s[i] && s[i + 2] == s[i];
    int q = triple ? 3 : 1;
    int a = i + q, e = t->end - q;
    if (flags & S_RAW) { buf_add(b, s + a, e - a); return; }
    for (int k = a; k < e; k++) {
        char c = s[k];
        if (c != '\\') { buf_ch(b, c); continue; }
        char d = s[++k];
        switch (d) {
        case '\n': break;
        case '\\': buf_ch(b, '\\'); break;
        case '\'': buf_ch(b, '\''); break;
        case '"': buf_ch(b, '"'); break;
        case 'a': buf_ch(b, 7); break;
        case 'b': buf_ch(b, 8); break;
        case 'f': buf_ch(b, 12); break;
        case 'n': buf_ch(b, '\n'); break;
        case 'r': buf_ch(b, '\r'); break;
        case 't': buf_ch(b, '\t'); break;
        case 'v': buf_ch(b, 11); break;
        case 'x': case 'u': case 'U': {
            if ((flags & S_BYTES) && d != 'x') { buf_ch(b, '\\'); buf_ch(b, d); break; }
            int n = d == 'x' ? 2 : d == 'u' ? 4 : 8;
            unsigned long cp = 0;
            for (int j = 1; j <= n; j++) {
                int h = k + j < e ? hexval(s[k + j]) : -1;
                if (h < 0) unsure(r, "a truncated escape");
                cp = cp * 16 + (unsigned long)h;
            }
            k += n;
            if (flags & S_BYTES) { if (cp > 0xFF) unsure(r, "a byte escape"); buf_ch(b, (char)cp); }
            else put_utf8(r, b, cp);
            break;
        }
        default:
            if (d >= '0' && d <= '7') {
                unsigned long cp = (unsigned long)(d - '0');
                for (int j = 0; j < 2 && k + 1 < e && s[k + 1] >= '0' && s[k + 1] <= '7'; j++) cp = cp * 8 + (unsigned long)(s[++k] - '0');
                if (flags & S_BYTES) { if (cp > 0xFF) unsure(r, "a byte escape"); buf_ch(b, (char)cp); }
                else put_utf8(r, b, cp);
            } else if (d == 'N') {
                unsure(r, "a named escape");
            } else {  /* an unknown escape stays as written */
                buf_ch(b, '\\');
                buf_ch(b, d);
            }
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* expressions                                                                                */

static int new_node(R *r, int kind) {
    GROW(r->nodes, r->nnode, r->cnode, Node);
    Node *n = &r->nodes[r->nnode];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->a = n->b = -1;
    return r->nnode++;
}
static int store_kids(R *r, const int *items, int n) {
    int at = r->nkid;
    for (int i = 0; i < n; i++) { GROW(r->kids, r->nkid, r->ckid, int); r->kids[r->nkid++] = items[i]; }
    return at;
}

static int parse_test(R *r, int *k);

/* repr() of a value through Python's own repr, appended to hb; NULL object: not vouched for */
static void python_repr(R *r, PyObject *value, const char *prefix) {
    if (!value) { PyErr_Clear(); unsure(r, "a constant Python does not read"); }
    PyObject *text = PyObject_Repr(value);
    Py_DECREF(value);
    if (!text) { PyErr_Clear(); unsure(r, "a constant Python does not write"); }
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(text, &n);
    if (!u) { Py_DECREF(text); PyErr_Clear(); unsure(r, "a constant Python does not write"); }
    if (memchr(u, 'i', (size_t)n) || memchr(u, 'n', (size_t)n)) {
        /* inf and nan: ast.unparse writes 1e309; bytes and strings may hold the letters */
        if (!(u[0] == '\'' || u[0] == '"' || u[0] == 'b')) { Py_DECREF(text); unsure(r, "an infinite float"); }
    }
    buf_str(&r->hb, prefix);
    buf_add(&r->hb, u, n);
    Py_DECREF(text);
}

/* a constant from string tokens k.. (implicit concatenation) */
static int parse_strings(R *r, int *k) {
    int flags = 0, first = 1, count = 0, u = 0;
    r->sb.n = 0;
    while (*k < r->ntok && r->toks[*k].kind == T_STRING) {
        Tok *t = &r->toks[*k];
        int f = string_flags(r, t);
        if (f & S_FMT) unsure(r, "an f-string in a signature");
        if (f & S_U) {
            if (r->s[t->start] != 'u') unsure(r, "a U'' string in a signature");
            u = 1;
        }
        if (!first && (f & S_BYTES) != (flags & S_BYTES)) unsure(r, "bytes and str concatenated");
        flags = f;
        first = 0;
        count++;
        string_value(r, t, &r->sb);
        (*k)++;
    }
    if (u && count > 1) unsure(r, "a u'' string concatenated");
    int n = new_node(r, N_CONST);
    int off = (int)r->hb.n;
    PyObject *value = flags & S_BYTES ? PyBytes_FromStringAndSize(r->sb.p, r->sb.n)
                                      : PyUnicode_DecodeUTF8(r->sb.p, r->sb.n, NULL);
    python_repr(r, value, u ? "u" : "");
    r->nodes[n].toff = off;
    r->nodes[n].tlen = (int)r->hb.n - off;
    return n;
}

static int parse_number(R *r, Tok *t) {
    const char *s = r->s + t->start;
    int len = t->end - t->start;
    int n = new_node(r, N_CONST);
    int off = (int)r->hb.n;
    int is_float = 0, hex = len > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    for (int i = 0; i < len; i++) {
        if (s[i] == 'j' || s[i] == 'J') unsure(r, "a complex number");
        if (s[i] == '.' || (!hex && (s[i] == 'e' || s[i] == 'E'))) is_float = 1;
    }
    PyObject *text = PyUnicode_FromStringAndSize(s, len);
    if (!text) { PyErr_Clear(); unsure(r, "a bad number"); }
    PyObject *value;
    if (is_float) value = PyFloat_FromString(text);
    else {
        /* int() with base 0 reads a literal as the parser does (underscores, prefixes; zeros) */
        PyObject *base = PyLong_FromLong(0);
        value = base ? PyLong_FromUnicodeObject(text, 0) : NULL;
        Py_XDECREF(base);
    }
    Py_DECREF(text);
    python_repr(r, value, "");
    r->nodes[n].is_int = !is_float;
    r->nodes[n].toff = off;
    r->nodes[n].tlen = (int)r->hb.n - off;
    return n;
}

/* elements up to the closing bracket `close`; star: starred items allowed. Returns the count and
 * whether a comma was seen (*comma). */
static int parse_items(R *r, int *k, const char *close, int *items, int max, int *comma) {
    int n = 0;
    *comma = 0;
    while (!(tok_is)(r, *k, close)) {
        int e;
        if (tok_is(r, *k, "*")) {
            (*k)++;
            e = new_node(r, N_STARRED);
            int v = parse_test(r, k);
            r->nodes[e].a = v;
        } else {
            e = parse_test(r, k);
        }
        if (n >= max) unsure(r, "too many items");
        items[n++] = e;
        if (tok_is(r, *k, ",")) { (*k)++; *comma = 1; continue; }
        if (!(tok_is)(r, *k, close)) unsure(r, "an expression this reading does not know");
    }
    (*k)++;
    return n;
}

static int parse_atom(R *r, int *k) {
    if (*k >= r->ntok) unsure(r, "an expression ends early");
    Tok *t = &r->toks[*k];
    if (t->kind == T_NAME) {
        int n;
        if (is_keyword(r, *k)) {
            if (!tok_is(r, *k, "None") && !tok_is(r, *k, "True") && !tok_is(r, *k, "False"))
                unsure(r, "a keyword in an expression");
        }
        n = new_node(r, N_NAME);
        r->nodes[n].toff = t->start;
        r->nodes[n].tlen = t->end - t->start;
        (*k)++;
        return n;
    }
    if (t->kind == T_NUMBER) { (*k)++; return parse_number(r, t); }
    if (t->kind == T_STRING) return parse_strings(r, k);
    int items[256], comma;
    if (tok_is(r, *k, "...")) {
        (*k)++;
        int n = new_node(r, N_CONST);
        int off = (int)r->hb.n;
        buf_str(&r->hb, "...");
        r->nodes[n].toff = off; r->nodes[n].tlen = 3;
        return n;
    }
    if (tok_is(r, *k, "(")) {
        (*k)++;
        if (tok_is(r, *k, ")")) {
            (*k)++;
            return new_node(r, N_TUPLE);
        }
        int save = *k;
        int cnt = parse_items(r, k, ")", items, 256, &comma);
        if (!comma && cnt == 1 && r->nodes[items[0]].kind != N_STARRED) return items[0];  /* parentheses */
        (void)save;
        int n = new_node(r, N_TUPLE);
        r->nodes[n].ls = store_kids(r, items, cnt);
        r->nodes[n].ln = cnt;
        return n;
    }
    if (tok_is(r, *k, "[")) {
        (*k)++;
        int cnt = parse_items(r, k, "]", items, 256, &comma);
        int n = new_node(r, N_LIST);
        r->nodes[n].ls = store_kids(r, items, cnt);
        r->nodes[n].ln = cnt;
        return n;
    }
    if (tok_is(r, *k, "{")) {
        (*k)++;
        int keys[256], vals[256], cnt = 0, is_dict = -1;
        while (!tok_is(r, *k, "}")) {
            if (cnt >= 256) unsure(r, "too many items");
            if (tok_is(r, *k, "**")) {
                if (is_dict == 0) unsure(r, "a bad display");
                is_dict = 1;
                (*k)++;
                keys[cnt] = -1;
                vals[cnt] = parse_test(r, k);  /* at EXPR in ast; the subset has nothing lower than | */
            } else if (tok_is(r, *k, "*")) {
                if (is_dict == 1) unsure(r, "a bad display");
                is_dict = 0;
                (*k)++;
                int e = new_node(r, N_STARRED);
                int v = parse_test(r, k);
                r->nodes[e].a = v;
                keys[cnt] = e;
            } else {
                int e = parse_test(r, k);
                if (tok_is(r, *k, ":")) {
                    if (is_dict == 0) unsure(r, "a bad display");
                    is_dict = 1;
                    (*k)++;
                    keys[cnt] = e;
                    vals[cnt] = parse_test(r, k);
                } else {
                    if (is_dict == 1) unsure(r, "a bad display");
                    is_dict = 0;
                    keys[cnt] = e;
                }
            }
            cnt++;
            if (tok_is(r, *k, ",")) { (*k)++; continue; }
            if (!tok_is(r, *k, "}")) unsure(r, "an expression this reading does not know");
        }
        (*k)++;
        int n = new_node(r, is_dict == 0 ? N_SET : N_DICT);
        r->nodes[n].ls = store_kids(r, keys, cnt);
        r->nodes[n].ln = cnt;
        if (is_dict != 0) { r->nodes[n].ls2 = store_kids(r, vals, cnt); r->nodes[n].ln2 = cnt; }
        return n;
    }
    unsure(r, "an expression this reading does not know");
    return -1;
}

/* f(args): positional (starred allowed) and keywords (name=value, **value) */
static int parse_call_args(R *r, int *k, int func) {
    int args[256], kws[256], na = 0, nk = 0;
    while (!tok_is(r, *k, ")")) {
        if (na >= 256 || nk >= 256) unsure(r, "too many arguments");
        if (tok_is(r, *k, "**")) {
            (*k)++;
            int kw = new_node(r, N_KEYWORD);
            int v = parse_test(r, k);
            r->nodes[kw].a = v;
            r->nodes[kw].tlen = 0;
            kws[nk++] = kw;
        } else if (tok_is(r, *k, "*")) {
            (*k)++;
            int e = new_node(r, N_STARRED);
            int v = parse_test(r, k);
            r->nodes[e].a = v;
            args[na++] = e;
        } else if (tok_name(r, *k) && tok_is(r, *k + 1, "=")) {
            Tok *t = &r->toks[*k];
            if (is_keyword(r, *k)) unsure(r, "a keyword argument named by a keyword");
            *k += 2;
            int kw = new_node(r, N_KEYWORD);
            int v = parse_test(r, k);
            r->nodes[kw].a = v;
            r->nodes[kw].toff = t->start;
            r->nodes[kw].tlen = t->end - t->start;
            kws[nk++] = kw;
        } else {
            args[na++] = parse_test(r, k);
        }
        if (tok_is(r, *k, ",")) { (*k)++; continue; }
        if (!tok_is(r, *k, ")")) unsure(r, "a call this reading does not know");
    }
    (*k)++;
    int n = new_node(r, N_CALL);
    r->nodes[n].a = func;
    r->nodes[n].ls = store_kids(r, args, na); r->nodes[n].ln = na;
    r->nodes[n].ls2 = store_kids(r, kws, nk); r->nodes[n].ln2 = nk;
    return n;
}

static int parse_primary(R *r, int *k) {
    int e = parse_atom(r, k);
    for (;;) {
        if (tok_is(r, *k, ".")) {
            if (!tok_name(r, *k + 1)) unsure(r, "a bad attribute");
            if (r->nodes[e].kind == N_CONST && r->nodes[e].is_int) unsure(r, "an attribute of an int");
            Tok *t = &r->toks[*k + 1];
            int n = new_node(r, N_ATTR);
            r->nodes[n].a = e;
            r->nodes[n].toff = t->start;
            r->nodes[n].tlen = t->end - t->start;
            *k += 2;
            e = n;
        } else if (tok_is(r, *k, "(")) {
            (*k)++;
            e = parse_call_args(r, k, e);
        } else if (tok_is(r, *k, "[")) {
            (*k)++;
            int items[256], comma;
            int cnt = parse_items(r, k, "]", items, 256, &comma);
            if (cnt == 0) unsure(r, "an empty subscript");
            int sl;
            if (!comma && cnt == 1) sl = items[0];
            else {
                sl = new_node(r, N_TUPLE);
                r->nodes[sl].ls = store_kids(r, items, cnt);
                r->nodes[sl].ln = cnt;
            }
            for (int i = 0; i < cnt; i++) if (r->nodes[items[i]].kind == N_STARRED) unsure(r, "a starred subscript");
            int n = new_node(r, N_SUB);
            r->nodes[n].a = e;
            r->nodes[n].b = sl;
            e = n;
        } else {
            return e;
        }
    }
}

/* binary operators: index, text, precedence */
static const struct { const char *text; int prec; } BINOPS[] = {
    {"|", P_BOR}, {"^", P_BXOR}, {"&", P_BAND}, {"<<", P_SHIFT}, {">>", P_SHIFT}, {"+", P_ARITH}, {"-", P_ARITH},
    {"*", P_TERM}, {"/", P_TERM}, {"//", P_TERM}, {"%", P_TERM}, {"@", P_TERM}, {"**", P_POWER}, {NULL, 0}};
static const char *UNOPS[] = {"-", "+", "~"};

static int parse_factor(R *r, int *k);

static int parse_power(R *r, int *k) {
    if (tok_is(r, *k, "await")) unsure(r, "await in an expression");
    int e = parse_primary(r, k);
    if (tok_is(r, *k, "**")) {
        (*k)++;
        int right = parse_factor(r, k);
        int n = new_node(r, N_BINOP);
        r->nodes[n].op = 12;
        r->nodes[n].a = e;
        r->nodes[n].b = right;
        return n;
    }
    return e;
}

static int parse_factor(R *r, int *k) {
    for (int u = 0; u < 3; u++) {
        if ((tok_is)(r, *k, UNOPS[u])) {
            (*k)++;
            int operand = parse_factor(r, k);
            int n = new_node(r, N_UNARY);
            r->nodes[n].op = u;
            r->nodes[n].a = operand;
            return n;
        }
    }
    return parse_power(r, k);
}

/* precedence climbing over the binary operators below ** */
static int parse_binary(R *r, int *k, int min_prec) {
    int left = parse_factor(r, k);
    for (;;) {
        int op = -1;
        for (int i = 0; BINOPS[i].text && i < 12; i++) if ((tok_is)(r, *k, BINOPS[i].text)) { op = i; break; }
        if (op < 0 || BINOPS[op].prec < min_prec) return left;
        (*k)++;
        int right = parse_binary(r, k, BINOPS[op].prec + 1);
        int n = new_node(r, N_BINOP);
        r->nodes[n].op = op;
        r->nodes[n].a = left;
        r->nodes[n].b = right;
        left = n;
    }
}

static const char *CMPOPS[] = {"==", "!=", "<", "<=", ">", ">=", "is", "is not", "in", "not in"};

/* comparison: a | b (op c)*; ops in ls2 as indices into CMPOPS (kept in kids) */
static int parse_comparison(R *r, int *k) {
    int left = parse_binary(r, k, P_BOR);
    int ops[64], rights[64], n = 0;
    for (;;) {
        int op = -1;
        if (tok_is(r, *k, "==")) op = 0; else if (tok_is(r, *k, "!=")) op = 1; else if (tok_is(r, *k, "<")) op = 2;
        else if (tok_is(r, *k, "<=")) op = 3; else if (tok_is(r, *k, ">")) op = 4; else if (tok_is(r, *k, ">=")) op = 5;
        else if (tok_is(r, *k, "is")) { op = 6; if (tok_is(r, *k + 1, "not")) { op = 7; (*k)++; } }
        else if (tok_is(r, *k, "in")) op = 8;
        else if (tok_is(r, *k, "not") && tok_is(r, *k + 1, "in")) { op = 9; (*k)++; }
        if (op < 0) break;
        (*k)++;
        if (n >= 64) unsure(r, "a long comparison");
        ops[n] = op;
        rights[n++] = parse_binary(r, k, P_BOR);
    }
    if (!n) return left;
    int e = new_node(r, N_COMPARE);
    r->nodes[e].a = left;
    r->nodes[e].ls = store_kids(r, rights, n); r->nodes[e].ln = n;
    r->nodes[e].ls2 = store_kids(r, ops, n); r->nodes[e].ln2 = n;
    return e;
}

static int parse_not(R *r, int *k) {
    if (tok_is(r, *k, "not")) {
        (*k)++;
        int operand = parse_not(r, k);
        int e = new_node(r, N_NOT);
        r->nodes[e].a = operand;
        return e;
    }
    return parse_comparison(r, k);
}

/* a or b or c (op 0) / a and b (op 1): one node with every value of its level */
static int parse_boolop(R *r, int *k, int is_and) {
    int values[64], n = 0;
    values[n++] = is_and ? parse_not(r, k) : parse_boolop(r, k, 1);
    while (is_and ? tok_is(r, *k, "and") : tok_is(r, *k, "or")) {
        (*k)++;
        if (n >= 64) unsure(r, "a long boolean expression");
        values[n++] = is_and ? parse_not(r, k) : parse_boolop(r, k, 1);
    }
    if (n == 1) return values[0];
    int e = new_node(r, N_BOOLOP);
    r->nodes[e].op = is_and;
    r->nodes[e].ls = store_kids(r, values, n); r->nodes[e].ln = n;
    return e;
}

/* lambda [params]: body; params as N_PARAM nodes (op 0 plain, 1 '/', 2 '*', 3 '**'; a: default) */
static int parse_lambda(R *r, int *k) {
    (*k)++;
    int params[64], n = 0, star = 0, need_kwonly = 0, kwonly = 0, seen_default = 0, npos = 0;
    while (!tok_is(r, *k, ":")) {
        if (n >= 64) unsure(r, "a long lambda");
        int p = new_node(r, N_PARAM);
        if (tok_is(r, *k, "/")) {
            if (star || !npos) unsure(r, "a bad lambda");
            r->nodes[p].op = 1;
            (*k)++;
        } else if (tok_is(r, *k, "**")) {
            (*k)++;
            if (!tok_name(r, *k) || is_keyword(r, *k)) unsure(r, "a bad lambda");
            r->nodes[p].op = 3;
            r->nodes[p].toff = r->toks[*k].start; r->nodes[p].tlen = r->toks[*k].end - r->toks[*k].start;
            (*k)++;
            params[n++] = p;
            if (tok_is(r, *k, ",")) (*k)++;
            if (!tok_is(r, *k, ":")) unsure(r, "a bad lambda");
            break;
        } else if (tok_is(r, *k, "*")) {
            if (star) unsure(r, "a bad lambda");
            star = 1;
            r->nodes[p].op = 2;
            (*k)++;
            if (tok_name(r, *k) && !is_keyword(r, *k)) {
                r->nodes[p].toff = r->toks[*k].start; r->nodes[p].tlen = r->toks[*k].end - r->toks[*k].start;
                (*k)++;
            } else need_kwonly = 1;
        } else {
            if (!tok_name(r, *k) || is_keyword(r, *k)) unsure(r, "a bad lambda");
            r->nodes[p].toff = r->toks[*k].start; r->nodes[p].tlen = r->toks[*k].end - r->toks[*k].start;
            (*k)++;
            if (tok_is(r, *k, "=")) {
                (*k)++;
                int d = parse_test(r, k);
                r->nodes[p].a = d;
                if (!star) seen_default = 1;
            } else if (!star && seen_default) unsure(r, "a bad lambda");
            if (star) kwonly++; else npos++;
        }
        params[n++] = p;
        if (tok_is(r, *k, ",")) { (*k)++; continue; }
        if (!tok_is(r, *k, ":")) unsure(r, "a bad lambda");
    }
    if (need_kwonly && !kwonly) unsure(r, "a bad lambda");
    (*k)++;
    int body = parse_test(r, k);
    int e = new_node(r, N_LAMBDA);
    r->nodes[e].ls = store_kids(r, params, n); r->nodes[e].ln = n;
    r->nodes[e].b = body;
    return e;
}

static int parse_test(R *r, int *k) {
    if (tok_is(r, *k, "yield") || tok_is(r, *k, "await")) unsure(r, "an expression this reading does not know");
    if (tok_is(r, *k, "lambda")) return parse_lambda(r, k);
    int e = parse_boolop(r, k, 0);
    if (tok_is(r, *k, "if")) {
        (*k)++;
        int test = parse_boolop(r, k, 0);
        if (!tok_is(r, *k, "else")) unsure(r, "an expression this reading does not know");
        (*k)++;
        int orelse = parse_test(r, k);
        int n = new_node(r, N_IFEXP);
        r->nodes[n].a = e;
        r->nodes[n].b = test;
        r->nodes[n].c = orelse;
        e = n;
    }
    if (*k < r->ntok && (r->toks[*k].kind == T_NAME || tok_is(r, *k, ":=")))
        unsure(r, "an expression this reading does not know");
    return e;
}

/* ast.unparse's text of node e where its context asks for precedence `prec` */
static void unparse(R *r, int e, int prec, Buf *b) {
    Node *n = &r->nodes[e];
    switch (n->kind) {
    case N_NAME: buf_add(b, r->s + n->toff, n->tlen); return;
    case N_CONST: buf_add(b, r->hb.p + n->toff, n->tlen); return;
    case N_ATTR:
        unparse(r, n->a, P_ATOM, b);
        buf_ch(b, '.');
        buf_add(b, r->s + r->nodes[e].toff, r->nodes[e].tlen);
        return;
    case N_SUB: {
        unparse(r, n->a, P_ATOM, b);
        buf_ch(b, '[');
        Node *sl = &r->nodes[n->b];
        if (sl->kind == N_TUPLE && sl->ln > 0) {
            int ls = sl->ls, ln = sl->ln;
            for (int i = 0; i < ln; i++) {
                if (i) buf_str(b, ", ");
                unparse(r, r->kids[ls + i], P_TEST, b);
            }
            if (ln == 1) buf_ch(b, ',');
        } else {
            unparse(r, n->b, P_TEST, b);
        }
        buf_ch(b, ']');
        return;
    }
    case N_CALL: {
        unparse(r, n->a, P_ATOM, b);
        buf_ch(b, '(');
        int comma = 0;
        int ls = n->ls, ln = n->ln, ls2 = n->ls2, ln2 = n->ln2;
        for (int i = 0; i < ln; i++) { if (comma) buf_str(b, ", "); comma = 1; unparse(r, r->kids[ls + i], P_TEST, b); }
        for (int i = 0; i < ln2; i++) { if (comma) buf_str(b, ", "); comma = 1; unparse(r, r->kids[ls2 + i], P_TEST, b); }
        buf_ch(b, ')');
        return;
    }
    case N_KEYWORD:
        if (n->tlen == 0) buf_str(b, "**");
        else { buf_add(b, r->s + n->toff, n->tlen); buf_ch(b, '='); }
        unparse(r, n->a, P_TEST, b);
        return;
    case N_STARRED:
        buf_ch(b, '*');
        unparse(r, n->a, P_EXPR, b);
        return;
    case N_TUPLE: {
        int paren = n->ln == 0 || prec > P_TUPLE;
        int ls = n->ls, ln = n->ln;
        if (paren) buf_ch(b, '(');
        for (int i = 0; i < ln; i++) { if (i) buf_str(b, ", "); unparse(r, r->kids[ls + i], P_TEST, b); }
        if (ln == 1) buf_ch(b, ',');
        if (paren) buf_ch(b, ')');
        return;
    }
    case N_LIST: case N_SET: {
        int ls = n->ls, ln = n->ln;
        buf_ch(b, n->kind == N_LIST ? '[' : '{');
        for (int i = 0; i < ln; i++) { if (i) buf_str(b, ", "); unparse(r, r->kids[ls + i], P_TEST, b); }
        buf_ch(b, n->kind == N_LIST ? ']' : '}');
        return;
    }
    case N_DICT: {
        int ls = n->ls, ln = n->ln, ls2 = n->ls2;
        buf_ch(b, '{');
        for (int i = 0; i < ln; i++) {
            if (i) buf_str(b, ", ");
            int key = r->kids[ls + i], val = r->kids[ls2 + i];
            if (key < 0) { buf_str(b, "**"); unparse(r, val, P_EXPR, b); }
            else { unparse(r, key, P_TEST, b); buf_str(b, ": "); unparse(r, val, P_TEST, b); }
        }
        buf_ch(b, '}');
        return;
    }
    case N_BINOP: {
        int op = n->op, oprec = BINOPS[op].prec;
        int lp = op == 12 ? oprec + 1 : oprec, rp = op == 12 ? oprec : oprec + 1;
        int paren = prec > oprec;
        int left = n->a, right = n->b;
        if (paren) buf_ch(b, '(');
        unparse(r, left, lp, b);
        buf_ch(b, ' ');
        buf_str(b, BINOPS[op].text);
        buf_ch(b, ' ');
        unparse(r, right, rp, b);
        if (paren) buf_ch(b, ')');
        return;
    }
    case N_NOT: {
        int paren = prec > P_NOT, operand = n->a;
        if (paren) buf_ch(b, '(');
        buf_str(b, "not ");
        unparse(r, operand, P_NOT, b);
        if (paren) buf_ch(b, ')');
        return;
    }
    case N_BOOLOP: {
        int oprec = n->op ? P_AND : P_OR, ls = n->ls, ln = n->ln, is_and = n->op;
        int paren = prec > oprec;
        if (paren) buf_ch(b, '(');
        for (int i = 0; i < ln; i++) {  /* each value one level higher than the one before */
            if (i) buf_str(b, is_and ? " and " : " or ");
            unparse(r, r->kids[ls + i], oprec + 1 + i > P_ATOM ? P_ATOM : oprec + 1 + i, b);
        }
        if (paren) buf_ch(b, ')');
        return;
    }
    case N_COMPARE: {
        int paren = prec > P_CMP, left = n->a, ls = n->ls, ln = n->ln, ls2 = n->ls2;
        if (paren) buf_ch(b, '(');
        unparse(r, left, P_CMP + 1, b);
        for (int i = 0; i < ln; i++) {
            buf_ch(b, ' ');
            buf_str(b, CMPOPS[r->kids[ls2 + i]]);
            buf_ch(b, ' ');
            unparse(r, r->kids[ls + i], P_CMP + 1, b);
        }
        if (paren) buf_ch(b, ')');
        return;
    }
    case N_IFEXP: {
        int paren = prec > P_TEST, body = n->a, test = n->b, orelse = n->c;
        if (paren) buf_ch(b, '(');
        unparse(r, body, P_TEST + 1, b);
        buf_str(b, " if ");
        unparse(r, test, P_TEST + 1, b);
        buf_str(b, " else ");
        unparse(r, orelse, P_TEST, b);
        if (paren) buf_ch(b, ')');
        return;
    }
    case N_LAMBDA: {
        int paren = prec > P_TEST, ls = n->ls, ln = n->ln, body = n->b;
        if (paren) buf_ch(b, '(');
        buf_str(b, "lambda");
        for (int i = 0; i < ln; i++) {
            Node *p = &r->nodes[r->kids[ls + i]];
            int op = p->op, toff = p->toff, tlen = p->tlen, d = p->a;
            buf_str(b, i ? ", " : " ");
            if (op == 1) { buf_ch(b, '/'); continue; }
            if (op == 2) buf_ch(b, '*');
            if (op == 3) buf_str(b, "**");
            buf_add(b, r->s + toff, tlen);
            if (d >= 0) { buf_ch(b, '='); unparse(r, d, P_TEST, b); }
        }
        buf_str(b, ": ");
        unparse(r, body, P_TEST, b);
        if (paren) buf_ch(b, ')');
        return;
    }
    case N_UNARY: {
        int paren = prec > P_FACTOR;
        int operand = n->a;
        if (paren) buf_ch(b, '(');
        buf_str(b, UNOPS[n->op]);
        unparse(r, operand, P_FACTOR, b);
        if (paren) buf_ch(b, ')');
        return;
    }
    }
    unsure(r, "a node this reading does not write");
}

/* the Names of a target in ast.walk's order (breadth first), as (offset, length) pairs in names[] */
typedef struct { int depth, seq, off, len; } NameAt;
static void collect_names(R *r, int e, int depth, NameAt **out, int *n, int *cap, int *seq) {
    if (e < 0) return;
    Node *nd = &r->nodes[e];
    if (nd->kind == N_NAME) {
        GROW(*out, *n, *cap, NameAt);
        (*out)[*n].depth = depth; (*out)[*n].seq = (*seq)++; (*out)[*n].off = nd->toff; (*out)[*n].len = nd->tlen;
        (*n)++;
        return;
    }
    int a = nd->a, b = nd->b, ls = nd->ls, ln = nd->ln, ls2 = nd->ls2, ln2 = nd->ln2, kind = nd->kind;
    if (kind == N_LAMBDA || kind == N_PARAM) unsure(r, "a lambda in an assignment target");
    if (kind == N_IFEXP) {  /* IfExp's fields: test, body, orelse */
        int c = nd->c;
        collect_names(r, b, depth + 1, out, n, cap, seq);
        collect_names(r, a, depth + 1, out, n, cap, seq);
        collect_names(r, c, depth + 1, out, n, cap, seq);
        return;
    }
    if (kind == N_COMPARE) ln2 = 0;  /* ls2 holds the operators, not nodes */
    /* children in _fields order; a dict's missing keys (None) are no nodes */
    collect_names(r, a, depth + 1, out, n, cap, seq);
    if (kind == N_SUB) collect_names(r, b, depth + 1, out, n, cap, seq);
    for (int i = 0; i < ln; i++) collect_names(r, r->kids[ls + i], depth + 1, out, n, cap, seq);
    for (int i = 0; i < ln2; i++) collect_names(r, r->kids[ls2 + i], depth + 1, out, n, cap, seq);
    if (kind == N_BINOP) collect_names(r, b, depth + 1, out, n, cap, seq);
}
static int cmp_nameat(const void *x, const void *y) {
    const NameAt *a = x, *b = y;
    if (a->depth != b->depth) return a->depth - b->depth;
    return a->seq - b->seq;
}

/* ------------------------------------------------------------------------------------------ */
/* statements                                                                                 */

static Block *top(R *r) { return &r->blocks[r->nblock - 1]; }

static void add_entry(R *r, int name_off, int name_len, int type, int idx, int toff, int tlen) {
    GROW(r->entries, r->nentry, r->centry, Entry);
    Entry *en = &r->entries[r->nentry++];
    en->name_off = name_off; en->name_len = name_len; en->type = type; en->idx = idx;
    en->text_off = toff; en->text_len = tlen;
}

/* a try's imports reordered as facts._imports walks them: body, else, finally, then the handlers */
static void finish_try(R *r, Block *b) {
    if (b->last != C_TRY) return;
    b->last = C_NONE;
    int n = b->nseg, end = r->nimp;
    if (!n) return;
    int count = end - b->try_start;
    if (count <= 0) return;
    Imp *tmp = malloc(sizeof(Imp) * (size_t)count);
    if (!tmp) abort();
    int w = 0;
    int body_end = b->seg_start[0];
    for (int i = b->try_start; i < body_end; i++) tmp[w++] = r->imps[i];
    for (int want = 1; want <= 2; want++)
        for (int s = 0; s < n; s++) if (b->seg_kind[s] == want) {
            int e = s + 1 < n ? b->seg_start[s + 1] : end;
            for (int i = b->seg_start[s]; i < e; i++) tmp[w++] = r->imps[i];
        }
    for (int s = 0; s < n; s++) if (b->seg_kind[s] == 0) {
        int e = s + 1 < n ? b->seg_start[s + 1] : end;
        for (int i = b->seg_start[s]; i < e; i++) tmp[w++] = r->imps[i];
    }
    memcpy(r->imps + b->try_start, tmp, sizeof(Imp) * (size_t)count);
    free(tmp);
}

static void pop_block(R *r) {
    Block *b = top(r);
    finish_try(r, b);
    r->nblock--;
}

static void push_block(R *r, int indent, int kind, int local, int tc, int klass) {
    GROW(r->blocks, r->nblock, r->cblock, Block);
    Block *b = &r->blocks[r->nblock++];
    b->indent = indent; b->kind = kind; b->local = local; b->tc = tc; b->klass = klass;
    b->last = C_NONE; b->nseg = 0; b->try_start = 0;
}

static void parse_import(R *r, int k, int end, int local, int tc) {
    Tok *t;
    if (tok_is(r, k, "import")) {
        k++;
        for (;;) {
            if (!tok_name(r, k)) unsure(r, "a bad import");
            int mod_off = r->toks[k].start, mod_end = r->toks[k].end;
            k++;
            while (tok_is(r, k, ".") && tok_name(r, k + 1)) { mod_end = r->toks[k + 1].end; k += 2; }
            int b_off = mod_off, b_len = mod_end - mod_off;
            if (tok_is(r, k, "as")) {
                if (!tok_name(r, k + 1)) unsure(r, "a bad import");
                t = &r->toks[k + 1];
                b_off = t->start; b_len = t->end - t->start;
                k += 2;
            }
            for (int i = mod_off; i < mod_end; i++) if (r->s[i] == ' ' || r->s[i] == '\\' || r->s[i] == '\t' || r->s[i] == '\n' || r->s[i] == '#')
                unsure(r, "a dotted name written apart");
            GROW(r->imps, r->nimp, r->cimp, Imp);
            Imp *im = &r->imps[r->nimp++];
            im->is_from = 0; im->level = 0; im->mod_off = mod_off; im->mod_len = mod_end - mod_off;
            im->names_start = 0; im->nnames = 0; im->bound_off = b_off; im->bound_len = b_len;
            im->local = local; im->tc = tc;
            if (k == end) return;
            if (!tok_is(r, k, ",")) unsure(r, "a bad import");
            k++;
        }
    }
    /* from */
    k++;
    int level = 0;
    while (tok_is(r, k, ".") || tok_is(r, k, "...")) { level += tok_is(r, k, ".") ? 1 : 3; k++; }
    int mod_off = -1, mod_len = 0;
    if (tok_name(r, k) && !tok_is(r, k, "import")) {
        int mod_end = r->toks[k].end;
        mod_off = r->toks[k].start;
        k++;
        while (tok_is(r, k, ".") && tok_name(r, k + 1)) { mod_end = r->toks[k + 1].end; k += 2; }
        mod_len = mod_end - mod_off;
        for (int i = mod_off; i < mod_end; i++) if (r->s[i] == ' ' || r->s[i] == '\\' || r->s[i] == '\t' || r->s[i] == '\n' || r->s[i] == '#')
            unsure(r, "a dotted name written apart");
    }
    if (!tok_is(r, k, "import")) unsure(r, "a bad import");
    if (!level && mod_off < 0) unsure(r, "a bad import");
    k++;
    int paren = 0, start = r->nname;
    if (tok_is(r, k, "(")) { paren = 1; k++; }
    if (tok_is(r, k, "*")) {
        GROW(r->names, r->nname, r->cname, Span);
        r->names[r->nname].off = r->toks[k].start; r->names[r->nname].len = 1; r->nname++;
        k++;
    } else {
        for (;;) {
            if (!tok_name(r, k)) unsure(r, "a bad import");
            GROW(r->names, r->nname, r->cname, Span);
            r->names[r->nname].off = r->toks[k].start; r->names[r->nname].len = r->toks[k].end - r->toks[k].start;
            r->nname++;
            k++;
            if (tok_is(r, k, "as")) { if (!tok_name(r, k + 1)) unsure(r, "a bad import"); k += 2; }
            if (tok_is(r, k, ",")) {
                k++;
                if (paren && tok_is(r, k, ")")) break;
                continue;
            }
            break;
        }
    }
    if (paren) { if (!tok_is(r, k, ")")) unsure(r, "a bad import"); k++; }
    if (k != end) unsure(r, "a bad import");
    GROW(r->imps, r->nimp, r->cimp, Imp);
    Imp *im = &r->imps[r->nimp++];
    im->is_from = 1; im->level = level; im->mod_off = mod_off; im->mod_len = mod_len;
    im->names_start = start; im->nnames = r->nname - start; im->bound_off = 0; im->bound_len = 0;
    im->local = local; im->tc = tc;
}

/* the lines first..last of the source, joined, cut to 200 characters, into hb */
static void assign_text(R *r, int first, int last, int *off, int *len) {
    int a = r->line_starts[first - 1];
    int e = last < r->nlines ? r->line_starts[last] - 1 : (int)r->n;
    if (e > (int)r->n) e = (int)r->n;
    if (e > a && r->s[e - 1] == '\n' && last >= r->nlines) e--;
    /* 200 characters: count code points */
    int chars = 0, i = a;
    while (i < e && chars < 200) {
        unsigned char c = (unsigned char)r->s[i];
        i++;
        while (i < e && (((unsigned char)r->s[i]) & 0xC0) == 0x80) i++;
        (void)c;
        chars++;
    }
    *off = (int)r->hb.n;
    buf_add(&r->hb, r->s + a, i - a);
    *len = (int)r->hb.n - *off;
}

/* a top-level assignment or annotated assignment in tokens [k, end) */
static void top_assignment(R *r, int k, int end) {
    int first_eq = -1, colon = -1;
    for (int i = k; i < end; i++) {
        Tok *t = &r->toks[i];
        if (t->depth) continue;
        if (tok_is(r, i, "lambda")) break;
        if (tok_is(r, i, "=")) { first_eq = i; break; }
        if (tok_is(r, i, ":")) { colon = i; break; }
    }
    if (first_eq < 0 && colon < 0) return;
    int targets[64], tend[64], nt = 0;
    if (colon >= 0) {
        targets[0] = k; tend[0] = colon; nt = 1;
    } else {
        int s = k;
        for (int i = k; i < end; i++) {
            if (r->toks[i].depth) continue;
            if (tok_is(r, i, "lambda")) break;
            if (tok_is(r, i, "=")) {
                if (nt >= 64) unsure(r, "too many targets");
                targets[nt] = s; tend[nt] = i; nt++;
                s = i + 1;
            }
        }
    }
    int first_line = r->toks[k].line, last_line = r->toks[end - 1].eline;
    int toff, tlen;
    assign_text(r, first_line, last_line, &toff, &tlen);
    int save_ntok = r->ntok;
    for (int t = 0; t < nt; t++) {
        int kk = targets[t];
        r->ntok = tend[t];  /* the target's tokens alone */
        r->nnode = 0; r->nkid = 0;
        int items[256], cnt = 0, comma = 0;
        while (kk < tend[t]) {
            int e;
            if (tok_is(r, kk, "*")) {
                kk++;
                e = new_node(r, N_STARRED);
                int v = parse_test(r, &kk);
                r->nodes[e].a = v;
            } else e = parse_test(r, &kk);
            if (cnt >= 256) unsure(r, "too many targets");
            items[cnt++] = e;
            if (kk < tend[t]) {
                if (!tok_is(r, kk, ",")) unsure(r, "an assignment target this reading does not know");
                kk++;
                comma = 1;
            }
        }
        if (!cnt) unsure(r, "an empty target");
        int root;
        if (cnt == 1 && !comma) root = items[0];
        else { root = new_node(r, N_TUPLE); r->nodes[root].ls = store_kids(r, items, cnt); r->nodes[root].ln = cnt; }
        NameAt *found = NULL;
        int nf = 0, cf = 0, seq = 0;
        collect_names(r, root, 0, &found, &nf, &cf, &seq);
        qsort(found, (size_t)nf, sizeof(NameAt), cmp_nameat);
        for (int i = 0; i < nf; i++) {
            add_entry(r, found[i].off, found[i].len, E_TEXT, -1, toff, tlen);
            r->work++;
        }
        free(found);
    }
    r->ntok = save_ntok;
}

/* the signature of the def at tokens k (after `def`) up to its colon; returns the colon's index */
static int def_signature(R *r, int k, int is_async, int *sig_idx) {
    if (!tok_name(r, k) || is_keyword(r, k)) unsure(r, "a bad def");
    Tok *name = &r->toks[k];
    k++;
    if (!tok_is(r, k, "(")) unsure(r, "a bad def");
    k++;
    r->nnode = 0; r->nkid = 0;
    Buf *o = &r->ob;
    o->n = 0;
    buf_str(o, is_async ? "async def " : "def ");
    buf_add(o, r->s + name->start, name->end - name->start);
    buf_ch(o, '(');
    int npos = 0, seen_default = 0, star = 0, nkwonly = 0, have_vararg = 0, parts = 0, slash_done = 0, need_kwonly = 0;
    /* parameters are written as they come, in ast.unparse's order (which is the source's) */
    while (!tok_is(r, k, ")")) {
        if (tok_is(r, k, "/")) {
            if (star || npos == 0 || slash_done) unsure(r, "a bad parameter list");
            slash_done = 1;
            buf_str(o, ", /");
            k++;
        } else if (tok_is(r, k, "**")) {
            k++;
            if (!tok_name(r, k)) unsure(r, "a bad parameter list");
            if (need_kwonly && !nkwonly) unsure(r, "a bare * with no keyword-only parameter");
            if (parts) buf_str(o, ", ");
            buf_str(o, "**");
            buf_add(o, r->s + r->toks[k].start, r->toks[k].end - r->toks[k].start);
            k++;
            if (tok_is(r, k, ":")) { k++; buf_str(o, ": "); unparse(r, parse_test(r, &k), P_TEST, o); }
            parts++;
            if (tok_is(r, k, ",")) k++;
            if (!tok_is(r, k, ")")) unsure(r, "a parameter after **");
            break;
        } else if (tok_is(r, k, "*")) {
            if (star) unsure(r, "a bad parameter list");
            star = 1;
            k++;
            if (parts) buf_str(o, ", ");
            buf_ch(o, '*');
            parts++;
            if (tok_name(r, k)) {
                have_vararg = 1;
                buf_add(o, r->s + r->toks[k].start, r->toks[k].end - r->toks[k].start);
                k++;
                if (tok_is(r, k, ":")) {
                    k++;
                    if (tok_is(r, k, "*")) unsure(r, "a starred annotation");
                    buf_str(o, ": ");
                    unparse(r, parse_test(r, &k), P_TEST, o);
                }
            } else {
                need_kwonly = 1;
            }
        } else {
            if (!tok_name(r, k) || is_keyword(r, k)) unsure(r, "a bad parameter");
            if (parts) buf_str(o, ", ");
            parts++;
            buf_add(o, r->s + r->toks[k].start, r->toks[k].end - r->toks[k].start);
            k++;
            if (tok_is(r, k, ":")) { k++; buf_str(o, ": "); unparse(r, parse_test(r, &k), P_TEST, o); }
            if (tok_is(r, k, "=")) {
                k++;
                buf_ch(o, '=');
                unparse(r, parse_test(r, &k), P_TEST, o);
                if (!star) seen_default = 1;
            } else if (!star && seen_default) {
                unsure(r, "a parameter without a default after one with");
            }
            if (star) nkwonly++; else npos++;
        }
        if (tok_is(r, k, ",")) { k++; continue; }
        if (!tok_is(r, k, ")")) unsure(r, "a bad parameter list");
    }
    if (need_kwonly && !nkwonly) unsure(r, "a bare * with no keyword-only parameter");
    (void)have_vararg;
    k++;
    buf_ch(o, ')');
    if (tok_is(r, k, "->")) {
        k++;
        buf_str(o, " -> ");
        unparse(r, parse_test(r, &k), P_TEST, o);
    }
    if (!tok_is(r, k, ":")) unsure(r, "a def header this reading does not know");
    buf_str(o, ": ...");
    GROW(r->sigs, r->nsig, r->csig, Sig);
    Sig *sg = &r->sigs[r->nsig];
    sg->sig_head_off = (int)r->hb.n;
    buf_add(&r->hb, o->p, o->n);
    sg->sig_head_len = (int)o->n;
    sg->doc_off = -1; sg->doc_len = 0; sg->next_method = -1;
    *sig_idx = r->nsig++;
    return k;
}

/* the first line of inspect.cleandoc(value), or nothing (doc_off -1) */
static void set_docstring(R *r, int sig, const char *v, Py_ssize_t n) {
    /* characters this reading does not vouch for: other line breaks, non-ASCII whitespace */
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == '\r' || c == 11 || c == 12 || (c >= 0x1c && c <= 0x1f)) unsure(r, "an odd character in a docstring");
        if (c == 0xC2 && i + 1 < n && ((unsigned char)v[i + 1] == 0x85 || (unsigned char)v[i + 1] == 0xA0)) unsure(r, "an odd character in a docstring");
        if (c == 0xE1 && i + 2 < n && (unsigned char)v[i + 1] == 0x9A && (unsigned char)v[i + 2] == 0x80) unsure(r, "an odd character in a docstring");
        if (c == 0xE2 && i + 2 < n && (unsigned char)v[i + 1] == 0x80 &&
            ((unsigned char)v[i + 2] <= 0x8A || (unsigned char)v[i + 2] == 0xA8 || (unsigned char)v[i + 2] == 0xA9 || (unsigned char)v[i + 2] == 0xAF))
            unsure(r, "an odd character in a docstring");
        if (c == 0xE2 && i + 2 < n && (unsigned char)v[i + 1] == 0x81 && (unsigned char)v[i + 2] == 0x9F) unsure(r, "an odd character in a docstring");
        if (c == 0xE3 && i + 2 < n && (unsigned char)v[i + 1] == 0x80 && (unsigned char)v[i + 2] == 0x80) unsure(r, "an odd character in a docstring");
        if (c == 0) unsure(r, "a null in a docstring");
    }
    /* expandtabs into ob, lines split at \n */
    Buf *o = &r->ob;
    o->n = 0;
    int col = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == '\t') { int sp = 8 - col % 8; for (int j = 0; j < sp; j++) buf_ch(o, ' '); col += sp; continue; }
        buf_ch(o, (char)c);
        if (c == '\n') col = 0;
        else if ((c & 0xC0) != 0x80) col++;
    }
    /* lines */
    const char *p = o->p;
    Py_ssize_t len = o->n;
    /* margin over lines after the first */
    Py_ssize_t first_end = 0;
    while (first_end < len && p[first_end] != '\n') first_end++;
    long margin = -1;
    Py_ssize_t i = first_end;
    while (i < len) {
        i++;  /* past \n */
        Py_ssize_t s = i;
        while (i < len && p[i] != '\n') i++;
        Py_ssize_t j = s;
        while (j < i && p[j] == ' ') j++;
        if (j < i && (margin < 0 || j - s < margin)) margin = (long)(j - s);
    }
    /* the first line, stripped */
    Py_ssize_t a = 0;
    while (a < first_end && p[a] == ' ') a++;
    if (a < first_end) {
        int off = (int)r->hb.n;
        buf_add(&r->hb, p + a, first_end - a);
        r->sigs[sig].doc_off = off;
        r->sigs[sig].doc_len = (int)(first_end - a);
        return;
    }
    i = first_end;
    while (i < len) {
        i++;
        Py_ssize_t s = i;
        while (i < len && p[i] != '\n') i++;
        Py_ssize_t from = margin < 0 ? s : s + margin;  /* line[margin:], code points: the cut is within spaces */
        if (margin >= 0) {
            /* a line shorter than the margin is emptied; the margin's characters are spaces on every line
               that has content, and a blank line is spaces only */
            if (from > i) from = i;
        }
        if (from < i) {
            int off = (int)r->hb.n;
            buf_add(&r->hb, p + from, i - from);
            r->sigs[sig].doc_off = off;
            r->sigs[sig].doc_len = (int)(i - from);
            return;
        }
    }
}

/* a one-token docstring whose first line has text and no escape or tab: that line, stripped, is
 * inspect.cleandoc's first line whatever the others hold; 0 when the general reading is needed */
static int first_line_only(R *r, int sig, Tok *t) {
    const char *s = r->s;
    int i = t->start;
    while (s[i] != '"' && s[i] != '\'') i++;
    int raw = string_flags(r, t) & S_RAW;
    int triple = t->end - i >= 6 && s[i + 1] == s[i] && s[i + 2] == s[i];
    int a = i + (triple ? 3 : 1), e = t->end - (triple ? 3 : 1);
    int stop = a;
    while (stop < e && s[stop] != '\n') stop++;
    int text = 0;
    for (int j = a; j < stop; j++) {
        unsigned char c = (unsigned char)s[j];
        if (c == '\t' || (c == '\\' && !raw) || c >= 0x80 || c < 0x20 || c == 0x7f) return 0;
        if (c != ' ') text = 1;
    }
    if (!text) return 0;
    while (s[a] == ' ') a++;
    int off = (int)r->hb.n;
    buf_add(&r->hb, s + a, stop - a);
    r->sigs[sig].doc_off = off;
    r->sigs[sig].doc_len = stop - a;
    return 1;
}

/* the body's first statement at tokens [k, end): a docstring when it is string tokens alone */
static void maybe_docstring(R *r, int sig, int k, int end) {
    if (sig < 0 || k >= end) return;
    if (tok_is(r, k, "(")) {
        /* a parenthesised first statement may be a docstring: only when it is not a string can it be
           left alone */
        if (k + 1 < end && r->toks[k + 1].kind == T_STRING) unsure(r, "a parenthesised docstring");
        return;
    }
    if (r->toks[k].kind != T_STRING) return;
    int i = k, fmt = 0, bytes = 0;
    for (; i < end && r->toks[i].kind == T_STRING; i++) {
        int f = string_flags(r, &r->toks[i]);
        if (f & S_FMT) fmt = 1;
        if (f & S_BYTES) bytes = 1;
    }
    if (i < end && !tok_is(r, i, ";")) return;  /* an expression that starts with a string */
    if (fmt || bytes) return;
    if (i == k + 1 && first_line_only(r, sig, &r->toks[k])) return;
    r->sb.n = 0;
    for (int j = k; j < i; j++) string_value(r, &r->toks[j], &r->sb);
    /* the value, apart: set_docstring writes ob and hb */
    r->db.n = 0;
    buf_add(&r->db, r->sb.p, r->sb.n);
    set_docstring(r, sig, r->db.p, r->db.n);
}

static int is_tc_test(R *r, int a, int b) {
    /* a test that is TYPE_CHECKING or NAME(.NAME)*.TYPE_CHECKING, parentheses stripped */
    while (b - a >= 2 && tok_is(r, a, "(") && tok_is(r, b - 1, ")") && r->toks[b - 1].depth == r->toks[a].depth) {
        /* the brackets must enclose everything */
        int ok = 1;
        for (int i = a + 1; i < b - 1; i++) if (r->toks[i].depth <= r->toks[a].depth) { ok = 0; break; }
        if (!ok) break;
        a++; b--;
    }
    if (b <= a || !tok_is(r, b - 1, "TYPE_CHECKING")) return 0;
    if (b - 1 > a && !tok_is(r, b - 2, ".")) {
        /* ``not TYPE_CHECKING``, ``x and TYPE_CHECKING``: the test is that operator, no Name */
        static const char *BEFORE[] = {"not", "and", "or", "in", "is", "==", "!=", "<", ">", "<=", ">=", "|", "&",
                                       "^", "+", "-", "*", "/", "%", "//", "**", "<<", ">>", "@", "~", NULL};
        for (int i = 0; BEFORE[i]; i++) if ((tok_is)(r, b - 2, BEFORE[i]) && r->toks[b - 2].depth == r->toks[a].depth) return 0;
        unsure(r, "a TYPE_CHECKING test this reading does not know");
    }
    for (int i = a; i < b; i++) {
        if ((i - a) % 2 == 0) { if (!tok_name(r, i)) unsure(r, "a TYPE_CHECKING test this reading does not know"); }
        else if (!tok_is(r, i, ".")) unsure(r, "a TYPE_CHECKING test this reading does not know");
    }
    return 1;
}

static void simple_statements(R *r, int k, int end, Block *where, int local, int tc, int doc_sig);

/* the index of the colon that ends a compound header starting at k */
static int header_colon(R *r, int k) {
    for (int i = k; i < r->ntok; i++) {
        if (r->toks[i].depth) continue;
        if (tok_is(r, i, "lambda")) unsure(r, "a lambda in a header");
        if (tok_is(r, i, ":")) return i;
    }
    unsure(r, "a header without a colon");
    return -1;
}

static const char *COMPOUND[] = {"if", "elif", "else", "for", "while", "try", "except", "finally", "with", "def",
                                 "class", "async", NULL};
static int is_compound(R *r, int k) {
    static int len[16];
    if (!len[0]) for (int i = 0; COMPOUND[i]; i++) len[i] = (int)strlen(COMPOUND[i]);
    if (k >= r->ntok || r->toks[k].kind != T_NAME) return 0;
    for (int i = 0; COMPOUND[i]; i++) if (tok_is_n(r, k, COMPOUND[i], len[i])) return 1;
    return 0;
}

static void logical_line(R *r, int indent) {
    /* the block this line belongs to */
    if (r->pend) {
        if (indent <= top(r)->indent) unsure(r, "an indentation this reading does not follow");
        push_block(r, indent, r->pend_kind, r->pend_local, r->pend_tc, r->pend_klass);
        r->pend = 0;
        int sig = r->pend_sig;
        r->pend_sig = -1;
        if (sig >= 0) {
            int e = 0;
            while (e < r->ntok && !(r->toks[e].depth == 0 && tok_is(r, e, ";"))) e++;
            maybe_docstring(r, sig, 0, e);
        }
    } else {
        while (indent < top(r)->indent) pop_block(r);
        if (indent != top(r)->indent) unsure(r, "an indentation this reading does not follow");
    }
    Block *b = top(r);
    int k = 0;
    if (r->toks[0].kind == T_OP && tok_is(r, 0, "@")) { finish_try(r, b); b->last = C_NONE; return; }
    /* ``match x:`` (a soft keyword: a simple statement never ends with a colon), and in its block
       every line is a ``case ...:`` clause: compound statements whose bodies the import walk enters */
    int match = tok_is(r, 0, "match") && tok_is(r, r->ntok - 1, ":") && r->toks[r->ntok - 1].depth == 0;
    if (b->kind == B_MATCH && !tok_is(r, 0, "case")) unsure(r, "a match block this reading does not know");
    int compound = match || b->kind == B_MATCH;
    if (tok_name(r, 0) && !compound) compound = is_compound(r, 0);
    if (tok_is(r, 0, "async") && !(tok_is(r, 1, "def") || tok_is(r, 1, "for") || tok_is(r, 1, "with"))) compound = 0;
    if (!compound) {
        finish_try(r, b);
        b->last = C_NONE;
        simple_statements(r, 0, r->ntok, b, b->local, b->tc, -1);
        return;
    }
    int is_async = tok_is(r, 0, "async");
    if (is_async) k = 1;
    int body_kind = B_OTHER, body_local = b->local, body_tc = b->tc, body_klass = -1, sig = -1, colon;
    int clause = tok_is(r, k, "except") || tok_is(r, k, "finally") || (tok_is(r, k, "else") && b->last == C_TRY);
    if (clause) {
        if (b->last != C_TRY) unsure(r, "a clause without its try");
        if (b->nseg >= MAX_SEGS) unsure(r, "too many handlers");
        b->seg_kind[b->nseg] = tok_is(r, k, "except") ? 0 : tok_is(r, k, "else") ? 1 : 2;
        b->seg_start[b->nseg] = r->nimp;
        b->nseg++;
        colon = header_colon(r, k);
    } else if (tok_is(r, k, "elif") || tok_is(r, k, "else")) {
        if (b->last != C_IF && !(b->last == C_LOOP && tok_is(r, k, "else"))) unsure(r, "an else without its statement");
        colon = header_colon(r, k);
        if (tok_is(r, k, "elif")) body_tc = b->tc || is_tc_test(r, k + 1, colon);
    } else {
        finish_try(r, b);
        b->last = C_OTHER;
        if (tok_is(r, k, "try")) {
            b->last = C_TRY;
            b->try_start = r->nimp;
            b->nseg = 0;
            colon = header_colon(r, k);
        } else if (tok_is(r, k, "if")) {
            b->last = C_IF;
            colon = header_colon(r, k);
            body_tc = b->tc || is_tc_test(r, k + 1, colon);
        } else if (tok_is(r, k, "for") || tok_is(r, k, "while")) {
            b->last = C_LOOP;
            colon = header_colon(r, k);
        } else if (tok_is(r, k, "with")) {
            colon = header_colon(r, k);
        } else if (match) {
            colon = header_colon(r, k);
            if (colon != r->ntok - 1) unsure(r, "a match statement this reading does not know");
            body_kind = B_MATCH;
        } else if (b->kind == B_MATCH) {  /* case PATTERN [if GUARD]: */
            colon = header_colon(r, k);
        } else if (tok_is(r, k, "def")) {
            int s;
            colon = def_signature(r, k + 1, is_async, &s);
            body_kind = B_DEF;
            body_local = 1;
            if (b->kind == B_MODULE) {
                Tok *nm = &r->toks[k + 1];
                add_entry(r, nm->start, nm->end - nm->start, E_DEF, s, 0, 0);
                r->work++;
                sig = s;
            } else if (b->kind == B_TOPCLASS) {
                Klass *kl = &r->klasses[b->klass];
                if (kl->last_method >= 0) r->sigs[kl->last_method].next_method = s;
                else kl->first_method = s;
                kl->last_method = s;
                kl->nmethods++;
                sig = s;
            }
        } else if (tok_is(r, k, "class")) {
            if (!tok_name(r, k + 1) || is_keyword(r, k + 1)) unsure(r, "a bad class");
            Tok *nm = &r->toks[k + 1];
            int j = k + 2;
            r->nnode = 0; r->nkid = 0;
            Buf *o = &r->ob;
            o->n = 0;
            if (tok_is(r, j, "(")) {
                j++;
                int nb = 0;
                while (!tok_is(r, j, ")")) {
                    if (tok_is(r, j, "**")) { j++; parse_test(r, &j); }
                    else if (tok_name(r, j) && tok_is(r, j + 1, "=")) { j += 2; parse_test(r, &j); }
                    else {
                        int e;
                        if (tok_is(r, j, "*")) { j++; e = new_node(r, N_STARRED); int v = parse_test(r, &j); r->nodes[e].a = v; }
                        else e = parse_test(r, &j);
                        if (nb++) buf_str(o, ", ");
                        unparse(r, e, P_TEST, o);
                    }
                    if (tok_is(r, j, ",")) { j++; continue; }
                    if (!tok_is(r, j, ")")) unsure(r, "a class header this reading does not know");
                }
                j++;
            }
            if (!tok_is(r, j, ":")) unsure(r, "a class header this reading does not know");
            colon = j;
            if (b->kind == B_MODULE) {
                GROW(r->klasses, r->nklass, r->cklass, Klass);
                Klass *kl = &r->klasses[r->nklass];
                kl->bases_off = (int)r->hb.n;
                buf_add(&r->hb, o->p, o->n);
                kl->bases_len = (int)o->n;
                kl->first_method = kl->last_method = -1;
                kl->nmethods = 0;
                kl->name_off = nm->start; kl->name_len = nm->end - nm->start;
                add_entry(r, nm->start, nm->end - nm->start, E_CLASS, r->nklass, 0, 0);
                body_kind = B_TOPCLASS;
                body_klass = r->nklass++;
            }
        } else {
            unsure(r, "a compound statement this reading does not know");
            return;
        }
    }
    if (colon + 1 < r->ntok) {  /* the body on the header's line */
        if (is_compound(r, colon + 1)) unsure(r, "a compound statement after a colon");
        simple_statements(r, colon + 1, r->ntok, NULL, body_local, body_tc, sig);
        return;
    }
    r->pend = 1;
    r->pend_kind = body_kind; r->pend_local = body_local; r->pend_tc = body_tc; r->pend_klass = body_klass;
    r->pend_sig = sig;
}

static void simple_statements(R *r, int k, int end, Block *where, int local, int tc, int doc_sig) {
    int first = 1;
    while (k < end) {
        int e = k;
        while (e < end && !(r->toks[e].depth == 0 && tok_is(r, e, ";"))) e++;
        if (e > k) {
            if (first && doc_sig >= 0) maybe_docstring(r, doc_sig, k, e);
            if (tok_is(r, k, "import") || tok_is(r, k, "from")) parse_import(r, k, e, local, tc);
            else if (where && where->kind == B_MODULE) top_assignment(r, k, e);
        }
        first = 0;
        k = e + 1;
    }
}

/* ------------------------------------------------------------------------------------------ */

static PyObject *span_str(const char *p, int len) { return PyUnicode_DecodeUTF8(p, len, NULL); }

static PyObject *build_result(R *r) {
    PyObject *interfaces = PyList_New(r->nentry);
    if (!interfaces) return NULL;
    Buf *o = &r->ob;
    for (int i = 0; i < r->nentry; i++) {
        Entry *en = &r->entries[i];
        o->n = 0;
        if (en->type == E_TEXT) buf_add(o, r->hb.p + en->text_off, en->text_len);
        else if (en->type == E_DEF) {
            Sig *sg = &r->sigs[en->idx];
            buf_add(o, r->hb.p + sg->sig_head_off, sg->sig_head_len);
            if (sg->doc_off >= 0) { buf_str(o, "\n    \"\"\""); buf_add(o, r->hb.p + sg->doc_off, sg->doc_len); buf_str(o, "\"\"\""); }
        } else {
            Klass *kl = &r->klasses[en->idx];
            buf_str(o, "class ");
            buf_add(o, r->s + kl->name_off, kl->name_len);
            buf_ch(o, '(');
            buf_add(o, r->hb.p + kl->bases_off, kl->bases_len);
            buf_str(o, "):\n");
            if (kl->nmethods == 0) buf_str(o, "    ...");
            int first = 1;
            for (int m = kl->first_method; m >= 0; m = r->sigs[m].next_method) {
                Sig *sg = &r->sigs[m];
                if (!first) buf_ch(o, '\n');
                first = 0;
                buf_str(o, "    ");
                buf_add(o, r->hb.p + sg->sig_head_off, sg->sig_head_len);
                if (sg->doc_off >= 0) { buf_str(o, "\n        \"\"\""); buf_add(o, r->hb.p + sg->doc_off, sg->doc_len); buf_str(o, "\"\"\""); }
            }
            r->work += 2 + kl->nmethods;
        }
        PyObject *name = span_str(r->s + en->name_off, en->name_len);
        PyObject *text = name ? span_str(o->p, (int)o->n) : NULL;
        PyObject *pair = text ? PyTuple_Pack(2, name, text) : NULL;
        Py_XDECREF(name);
        Py_XDECREF(text);
        if (!pair) { Py_DECREF(interfaces); return NULL; }
        PyList_SET_ITEM(interfaces, i, pair);
    }
    PyObject *imports = PyList_New(r->nimp);
    if (!imports) { Py_DECREF(interfaces); return NULL; }
    for (int i = 0; i < r->nimp; i++) {
        Imp *im = &r->imps[i];
        PyObject *mod, *names, *bound;
        if (im->mod_off >= 0) mod = span_str(r->s + im->mod_off, im->mod_len);
        else { mod = Py_None; Py_INCREF(mod); }
        if (im->is_from) {
            names = PyTuple_New(im->nnames);
            for (int j = 0; names && j < im->nnames; j++) {
                Span *sp = &r->names[im->names_start + j];
                PyTuple_SET_ITEM(names, j, span_str(r->s + sp->off, sp->len));
            }
            bound = PyUnicode_FromStringAndSize("", 0);
        } else {
            names = Py_None; Py_INCREF(names);
            bound = span_str(r->s + im->bound_off, im->bound_len);
        }
        PyObject *item = Py_BuildValue("(iNNNOO)", im->level, mod, names, bound,
                                       im->local ? Py_True : Py_False, im->tc ? Py_True : Py_False);
        if (!item) { Py_DECREF(interfaces); Py_DECREF(imports); return NULL; }
        PyList_SET_ITEM(imports, i, item);
    }
    PyObject *strings = PyList_New(r->ntriple);
    if (!strings) { Py_DECREF(interfaces); Py_DECREF(imports); return NULL; }
    Py_ssize_t at = 0, chars = 0;  /* text[:at] holds `chars` characters */
    for (int i = 0; i < r->ntriple; i++) {
        Py_ssize_t bounds[2] = {r->triples[i].off, r->triples[i].off + r->triples[i].len}, out[2];
        for (int j = 0; j < 2; j++) {
            if (r->ascii) { out[j] = bounds[j]; continue; }
            for (; at < bounds[j]; at++) if ((((unsigned char)r->s[at]) & 0xC0) != 0x80) chars++;
            out[j] = chars;
        }
        PyObject *item = Py_BuildValue("(nn)", out[0], out[1]);
        if (!item) { Py_DECREF(interfaces); Py_DECREF(imports); Py_DECREF(strings); return NULL; }
        PyList_SET_ITEM(strings, i, item);
    }
    return Py_BuildValue("(NlNN)", interfaces, r->work, imports, strings);
}

static PyObject *reader_read(PyObject *self, PyObject *arg) {
    (void)self;
    /* one reading at a time: Python code that runs inside one (a finalizer during an allocation)
       may switch threads, and another thread's call would reuse this reader's buffers */
    static int busy;
    if (busy) return PyUnicode_FromString("the reader is busy in another thread");
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    busy = 1;
    R *r = &G;
    r->s = view.buf;
    r->n = view.len;
    r->p = 0;
    r->line = 0;
    r->unsure = NULL;
    r->ntok = r->nnode = r->nkid = r->nsig = r->nklass = r->nentry = r->nimp = r->nname = r->nblock = r->nlines = 0;
    r->ntriple = 0;
    r->ascii = 1;
    r->hb.n = r->ob.n = r->sb.n = 0;
    r->work = 0;
    r->pend = 0; r->pend_sig = -1;
    PyObject *result = NULL;
    if (setjmp(r->jb) == 0) {
        /* bytes the line numbering or the tokenizer here would read otherwise than Python */
        const unsigned char *u = view.buf;
        static unsigned char odd[256];
        if (!odd['\r']) {
            odd['\r'] = odd['\f'] = odd['\v'] = odd[0] = odd[0x1c] = odd[0x1d] = odd[0x1e] = 1;
            for (int c = 0x80; c < 0x100; c++) odd[c] = 1;
        }
        for (Py_ssize_t i = 0; i < view.len; i++) {
            unsigned char c = u[i];
            if (!odd[c]) continue;
            if (c >= 0x80) r->ascii = 0;
            if (c == '\r' || c == '\f' || c == '\v' || c == 0 || (c >= 0x1c && c <= 0x1e)) unsure(r, "a line break or character Python's splitlines reads otherwise");
            if (c == 0xC2 && i + 1 < view.len && u[i + 1] == 0x85) unsure(r, "a NEL line break");
            if (c == 0xE2 && i + 2 < view.len && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9)) unsure(r, "a unicode line break");
            if (c == 0xEF && i == 0) unsure(r, "a byte order mark");
        }
        new_line(r, 0);
        push_block(r, 0, B_MODULE, 0, 0, -1);
        int indent;
        while (next_logical_line(r, &indent)) logical_line(r, indent);
        if (r->pend) unsure(r, "a header without its body");
        while (r->nblock > 1) pop_block(r);
        finish_try(r, top(r));
        result = build_result(r);
    } else {
        result = PyUnicode_FromString(r->unsure);
    }
    PyBuffer_Release(&view);
    busy = 0;
    return result;
}

static PyMethodDef METHODS[] = {
    {"read", reader_read, METH_O, "read(source: bytes) -> (interfaces, work, imports) | str (why not)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_reader", NULL, -1, METHODS, NULL, NULL, NULL, NULL};

#ifndef READER_SHA256
#define READER_SHA256 ""
#endif

/* SOURCE_SHA256: this file's digest when it was built, so that a stale build is not used */
PyMODINIT_FUNC PyInit__reader(void) {
    PyObject *m = PyModule_Create(&MODULE);
    if (m && PyModule_AddStringConstant(m, "SOURCE_SHA256", READER_SHA256) < 0) { Py_DECREF(m); return NULL; }
    return m;
}
