/* Whole-buffer number parsing for the pattern file readers (topomap.io).
 *
 * Grammar (the strict Python tier in topomap/io/_text.py implements the same):
 *   separators  ' ' '\t' '\v' '\f' '\r', and ',' when `commas` is set; '\n' ends a line
 *   integer     [+-]?[0-9]+, -2^63 < value < 2^63 - 1
 *   number      an integer, [+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?, or
 *               [+-]?(inf|infinity|nan) in any case; converted with correct rounding
 *   comments    with a marker byte (not a digit, '+' or '-': those mark nothing): from
 *               the marker to the end of the line is ignored;
 *               with `whole_line_comments`, only lines whose first byte after
 *               ' ' '\t' '\r' '\f' '\v' is the marker are comments, and a marker
 *               elsewhere is part of a (bad) token
 * A buffer has as many lines as '\n' characters, plus one when it does not end
 * with '\n' -- unless that last line is a comment starting at its first byte (or,
 * for whole-line comments, after blanks): removing the comment leaves no line.
 *
 * A scan runs in two passes over chunks of whole lines, each pass one parallel
 * loop (OpenMP): topomap_scan_init counts tokens and lines per chunk, the caller
 * allocates exactly sized outputs, then topomap_scan_numbers or
 * topomap_scan_table converts every chunk into its own slice of them
 * (topomap_scan_table_text runs both passes at once, into columns of a bounded
 * size).  The result does not depend on the number of chunks or threads.
 */
#ifndef TOPOMAP_TOKENIZE_H
#define TOPOMAP_TOKENIZE_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TOPOMAP_SCAN_MAX_CHUNKS 64

/* A buffer split into chunks of whole lines, with the tokens and lines before each. */
typedef struct {
    const char *buf;
    int64_t len;
    unsigned char cls[256]; /* byte class: 0 token, 1 blank, 2 newline, 3 comment marker */
    int comment;            /* marker byte, or -1 */
    int whole_line;         /* comments are whole lines */
    int last_line;          /* 1 when a last line without '\n' counts */
    int nchunks;
    int64_t start[TOPOMAP_SCAN_MAX_CHUNKS + 1];  /* chunk c is buf[start[c] .. start[c+1]) */
    int64_t tokens[TOPOMAP_SCAN_MAX_CHUNKS + 1]; /* tokens before chunk c; [nchunks]: all */
    int64_t lines[TOPOMAP_SCAN_MAX_CHUNKS + 1];  /* lines before chunk c; [nchunks]: all */
    unsigned char has_comment[TOPOMAP_SCAN_MAX_CHUNKS];
    int simd; /* the vector instructions both passes use (TOPOMAP_SCAN_SIMD_*) */
} topomap_scan;

/* Values of topomap_scan.simd: bytes one at a time, 16-byte SSE2 blocks, 32-byte AVX2 blocks. */
enum { TOPOMAP_SCAN_SIMD_NONE = 0, TOPOMAP_SCAN_SIMD_SSE2 = 1, TOPOMAP_SCAN_SIMD_AVX2 = 2 };

/* What a conversion pass found besides the values. */
typedef struct {
    int64_t filled_lines;  /* lines holding at least one number */
    int64_t min_width;     /* fewest numbers on a filled line (0 if none) */
    int64_t max_width;     /* most numbers on a line */
    int64_t comment_lines; /* whole-line comments (with whole_line_comments) */
    int is_float;          /* topomap_scan_numbers: the values are doubles */
    int64_t bad_offset;    /* byte offset of the first bad token (or line, for tables); -1 */
} topomap_scan_info;

/* Pass 1: split buf[0..len) into at most `nchunks` chunks (1..TOPOMAP_SCAN_MAX_CHUNKS;
 * below 1: chosen from len and the number of threads) of whole lines and count their
 * tokens and lines.  `comment` is the marker byte or -1.  Both passes use the widest vector
 * instructions this CPU has up to `max_simd` (a TOPOMAP_SCAN_SIMD_* value); every choice
 * gives the same result. */
void topomap_scan_init(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                       int whole_line_comments, int nchunks, int max_simd);

/* Pass 2: every token into `values` (8 bytes each, s->tokens[s->nchunks] of them):
 * int64_t when `integer` or when every token is an integer of the grammar, else
 * double (info->is_float).  `line_counts` (optional, s->lines[s->nchunks]
 * entries) receives the tokens of each line, -1 for a whole-line comment.
 * Returns 0; TOPOMAP_EINVAL for a token outside the grammar (an integer one when
 * `integer`), info->bad_offset naming the first; TOPOMAP_ENOTSUP when a valid
 * number could not be converted here (a decimal longer than 127 characters, or a
 * C locale not reading '.' as the decimal point): the caller converts another
 * way. */
int topomap_scan_numbers(const topomap_scan *s, int integer, void *values, int64_t *line_counts,
                         topomap_scan_info *info);

/* Pass 2 for a table: every line holding numbers must hold exactly `width` of
 * them; number j of row r goes to columns[j][r] converted as types[j]:
 *   'i' int64_t, an integer token     'n' int32_t, an integer token in [0, 2^31)
 *   'f' double, any number            'd' double, an integer token
 * Returns 0 with the number of rows in *rows; TOPOMAP_EINVAL when the text is not
 * such a table (a line of another width, a token outside the grammar or its
 * column's type), info->bad_offset at the first fault found: the caller then
 * reads the text with topomap_scan_numbers to learn what is wrong.  Columns hold
 * s->tokens[s->nchunks] / width entries. */
int topomap_scan_table(const topomap_scan *s, int width, const char *types, void *const *columns,
                       int64_t *rows, topomap_scan_info *info);

/* Both passes of a table in one call: topomap_scan_init's arguments, then topomap_scan_table's
 * with columns of room for `capacity` rows, at least topomap_scan_table_capacity(len, width)
 * (every row takes 2 * width bytes, but a last one without '\n').  Each chunk is converted as
 * soon as it and the chunks before it are counted, while the text's later pages are still
 * being read, so that a file not yet in the page cache is read and converted at once.  The
 * rows, results and errors are topomap_scan_table's. */
int64_t topomap_scan_table_capacity(int64_t len, int width);
int topomap_scan_table_text(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                            int whole_line_comments, int nchunks, int max_simd, int width, const char *types,
                            void *const *columns, int64_t capacity, int64_t *rows, topomap_scan_info *info);

/* Adjacency lists, one row per line (METIS and Scotch graphs as they are written): line r of
 * the text is row r and holds `head` non-negative integers (vertex values, not kept), then
 * with `degree` its number of entries, then its entries of `step` integers each: a neighbour
 * (an id in [base, base + n)) and, when step is 2, a non-negative weight, first when
 * `weight_first`.  Lines after row n - 1 hold no numbers. */
typedef struct {
    int32_t n;
    int head, degree, step, weight_first;
    int64_t base;
} topomap_rows_layout;

/* Entries such a text would hold (from pass 1's count), or -1 when it cannot be one. */
int64_t topomap_scan_row_entries(const topomap_scan *s, const topomap_rows_layout *layout);

/* Pass 2 for adjacency lists: row_ptr (n + 1: row r's entries are [row_ptr[r], row_ptr[r+1])),
 * dst (ids minus base) and weights (1 when step is 1), topomap_scan_row_entries of each.
 * Returns 0, or TOPOMAP_EINVAL when the text is anything else (then read it with
 * topomap_scan_numbers to learn what is wrong). */
int topomap_scan_rows(const topomap_scan *s, const topomap_rows_layout *layout, int64_t *row_ptr, int32_t *dst,
                      double *weights, topomap_scan_info *info);

/* Both passes of adjacency lists in one call (comments and commas are not part of their
 * grammar), as topomap_scan_table_text is for tables: dst and weights of room for `capacity`
 * entries, at least topomap_scan_rows_capacity(len, layout); *entries receives how many the
 * text holds.  Results are topomap_scan_rows's, and so are errors, but for texts with fewer
 * lines than rows: both refuse them, the fault they name may differ. */
int64_t topomap_scan_rows_capacity(int64_t len, const topomap_rows_layout *layout);
int topomap_scan_rows_text(topomap_scan *s, const char *buf, int64_t len, int nchunks, int max_simd,
                           const topomap_rows_layout *layout, int64_t *row_ptr, int32_t *dst, double *weights,
                           int64_t capacity, int64_t *entries, topomap_scan_info *info);

/* Entries found by topomap_scan_nonzeros: value[i] is number col[i] of line line[i]. */
typedef struct {
    int64_t count;
    int64_t *line;
    int64_t *col;
    double *value;
} topomap_scan_entries;

/* Pass 2 keeping only the numbers that are not zero (NaN included), in text order, for
 * dense matrices that are mostly zeros: `out` gets arrays this function allocates (free
 * them with topomap_scan_entries_free, also after a failure).  line_counts (optional) and
 * info as for topomap_scan_numbers; errors as topomap_scan_numbers with `integer` 0. */
int topomap_scan_nonzeros(const topomap_scan *s, int64_t *line_counts, topomap_scan_entries *out,
                          topomap_scan_info *info);
void topomap_scan_entries_free(topomap_scan_entries *e);

/* Both passes of topomap_scan_nonzeros in one call, as topomap_scan_table_text is for
 * tables: line_counts (optional) of room for `capacity` lines, at least
 * topomap_scan_lines_capacity(len); s->lines[s->nchunks] of them are written. */
int64_t topomap_scan_lines_capacity(int64_t len);
int topomap_scan_nonzeros_text(topomap_scan *s, const char *buf, int64_t len, int commas, int comment,
                               int whole_line_comments, int nchunks, int max_simd, int64_t *line_counts,
                               int64_t capacity, topomap_scan_entries *out, topomap_scan_info *info);

/* ---- Open MPI pml_monitoring files, one per rank (topomap/io/ompi_monitoring.py has the
 * grammar: the lines its regular expressions accept, and nothing else). */
typedef struct {
    int64_t me, peer;
    double bytes, msgs; /* the digits read as Python's float() reads them */
    int32_t file;
    char kind; /* 'E', 'I', 'S', 'R' or 'C' */
} topomap_monitoring_p2p;

typedef struct {
    int64_t rank;               /* 'O', 'A', 'X' lines: the rank field */
    double bytes, msgs;         /* 'O', 'A', 'X' lines */
    int64_t name_at, name_len;  /* headers: the communicator name, in names */
    int64_t procs_count, procs_max; /* headers with a list of ranks */
    int32_t file;
    char kind;                  /* 'H' header ("D" or, before Open MPI 4.0, "C"), 'O' O2A, 'A' A2O, 'X' A2A */
    signed char procs;          /* headers: 0 empty or "(null)", 1 a list of ranks, -1 anything else */
} topomap_monitoring_part;

typedef struct {
    int64_t np2p, nparts, names_len;
    topomap_monitoring_p2p *p2p;   /* point-to-point lines in file order */
    topomap_monitoring_part *parts; /* communicator headers and lines in file order */
    char *names;
    int64_t bad_file; /* the first file that cannot be read or holds another line; -1 */
    int64_t bad_line; /* its first such line (from 1); 0 when it cannot be read */
} topomap_monitoring;

/* Read and scan the files (on several threads).  Returns 0 -- with out->bad_file >= 0 and
 * nothing else when a file cannot be read or holds a line of no known kind -- or
 * TOPOMAP_ENOMEM.  Free with topomap_monitoring_free. */
int topomap_read_monitoring(const char *const *paths, int64_t nfiles, topomap_monitoring *out);
void topomap_monitoring_free(topomap_monitoring *m);

/* ---- dumpi2ascii text, one file per rank (topomap/io/dumpi_ascii.py has the grammar: the
 * records its regular expressions accept).  Every send call of dumpi_ascii.SEND_CALLS. */
typedef struct {
    int64_t count, size, dest, comm; /* size: the datatype's, from the file's "-X" lines or built in */
    int32_t file;
} topomap_dumpi_send;

typedef struct {
    int64_t nsends;
    topomap_dumpi_send *sends; /* in file order */
    int64_t bad_file; /* the first file the Python reader would refuse or must look at: not
                         UTF-8, a NUL, no call, a send call without its record, a number beyond
                         int64, a datatype without a (non-negative) size; -1 */
    int64_t bad_line; /* where (from 1; 0: the file cannot be read) */
} topomap_dumpi;

/* Read and scan the files (on several threads); built-in datatypes are named type_names with
 * sizes type_sizes.  Returns 0 (see bad_file) or TOPOMAP_ENOMEM.  Free with topomap_dumpi_free. */
int topomap_read_dumpi(const char *const *paths, int64_t nfiles, const char *const *type_names,
                       const int64_t *type_sizes, int ntypes, topomap_dumpi *out);
void topomap_dumpi_free(topomap_dumpi *d);

#ifdef __cplusplus
}
#endif
#endif
