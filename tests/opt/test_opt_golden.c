// test_opt_golden.c - Golden tests of the optimizer passes: every tests/opt/golden/*.txt holds
// cases of an input module, the pass to run and the expected module, in the printer's form.
//
// File format (STYLE.md section 9):
//   # pass: NAME          the pass of the following cases (then DCE, so goldens stay short;
//                         "NAME!" runs NAME alone)
//   # case: TEXT          starts a case: its input module follows
//   # expect:             the expected printed module follows
// Lines compare with surrounding whitespace ignored. Every file must hold at least two
// cases, and each case checks that the function still verifies.
#include <dirent.h>

#include "check.h"
#include "graph_parse.h"
#include "opt/opt.h"
#include "testlib/files.h"

/* Copies `s` with each line trimmed and blank lines dropped. */
static char *normalize(const char *s)
{
    char *out = malloc(strlen(s) + 2), *o = out;
    while (*s) {
        size_t len = strcspn(s, "\n");
        const char *b = s, *e = s + len;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            e--;
        if (e > b) {
            memcpy(o, b, (size_t)(e - b));
            o += e - b;
            *o++ = '\n';
        }
        s += len + (s[len] == '\n');
    }
    *o = '\0';
    return out;
}

static int cases_run;
/* `test_opt_golden --print FILE` prints what each case of FILE gives (to write new goldens,
 * which are then reviewed by hand), separated by "@@@@" lines. */
static bool print_only;

/* The backend hook of the fuse_activation goldens: everything but Sigmoid fuses. */
static bool fuse_hook(const glow_node *producer, const glow_node *act)
{
    (void)producer;
    return act->kind != NK_SIGMOID;
}

static void run_case(const char *file, const char *pass, const char *title, const char *input,
                     const char *expect)
{
    gp g;
    glow_module *m = gp_parse(&g, input);
    if (!m) {
        fprintf(stderr, "%s: case '%s': parse error: %s\n", file, title, g.err);
        CHECK(false);
        return;
    }
    char pname[64];
    snprintf(pname, sizeof pname, "%s", pass);
    bool alone = pname[0] && pname[strlen(pname) - 1] == '!';
    if (alone)
        pname[strlen(pname) - 1] = '\0';
    glow_pass_id id;
    glow_diag d = { 0 };
    glow_function *f = glow_module_function(m, "main");
    CHECK(f != NULL);
    if (!glow_pass_from_name(pname, &id) || !f) {
        fprintf(stderr, "%s: unknown pass '%s'\n", file, pname);
        CHECK(false);
        glow_module_destroy(m);
        return;
    }
    glow_opt_options o = { .verify = true, .fuse_activation = fuse_hook };
    glow_status s = glow_run_pass(f, id, &o, NULL, &d);
    if (s == GLOW_OK && !alone && id != GLOW_PASS_DCE)
        s = glow_run_pass(f, GLOW_PASS_DCE, &o, NULL, &d);
    if (s != GLOW_OK)
        fprintf(stderr, "%s: case '%s': %s\n", file, title, d.msg);
    CHECK_EQ(s, GLOW_OK);
    CHECK_EQ(glow_module_verify(m, &d), GLOW_OK);
    char *buf = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&buf, &size);
    glow_module_print(mem, m);
    fclose(mem);
    char *got = normalize(buf), *want = normalize(expect);
    if (print_only) {
        printf("%s@@@@\n", buf);
    } else if (strcmp(got, want) != 0) {
        fprintf(stderr, "%s: case '%s' (pass %s):\n--- expected\n%s--- got\n%s\n", file, title,
                pass, want, got);
        CHECK(false);
    }
    cases_run++;
    free(got);
    free(want);
    free(buf);
    glow_module_destroy(m);
}

static int run_file(const char *path)
{
    size_t size = 0;
    char *text = (char *)read_whole(path, &size);
    if (!text) {
        CHECK(false);
        return 0;
    }
    char pass[64] = "", title[256] = "";
    char *input = NULL, *expect = NULL;
    int ncases = 0;
    /* Sections are cut in place: each directive line ends the previous section. */
    char *s = text;
    char **section = NULL;
    while (*s) {
        char *eol = strchr(s, '\n');
        char *next = eol ? eol + 1 : s + strlen(s);
        bool is_pass = !strncmp(s, "# pass:", 7), is_case = !strncmp(s, "# case:", 7);
        bool is_expect = !strncmp(s, "# expect:", 9);
        if (is_pass || is_case || is_expect) {
            char directive[320];
            snprintf(directive, sizeof directive, "%.*s", (int)(next - s), s);
            *s = '\0';   /* terminates the section before */
            if (is_pass) {
                sscanf(directive + 7, " %63s", pass);
            } else if (is_case) {
                if (input && expect)
                    run_case(path, pass, title, input, expect), ncases++;
                input = expect = NULL;
                snprintf(title, sizeof title, "%.*s", (int)strcspn(directive + 8, "\n"),
                         directive + 8);
                section = &input;
            } else {
                section = &expect;
            }
            if (section && !*section)
                *section = next;
        }
        s = next;
    }
    if (input && expect)
        run_case(path, pass, title, input, expect), ncases++;
    if (ncases < 2)
        fprintf(stderr, "%s: %d cases (at least two wanted)\n", path, ncases);
    CHECK(ncases >= 2);
    free(text);
    return ncases;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--print")) {
        print_only = true;
        run_file(argv[2]);
        return 0;
    }
    const char *dir = "tests/opt/golden";
    DIR *dp = opendir(dir);
    CHECK(dp != NULL);
    int files = 0;
    bool covered[GLOW_PASS_COUNT] = { false };
    for (struct dirent *e; dp && (e = readdir(dp));) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".txt") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        run_file(path);
        files++;
        char pname[256];
        snprintf(pname, sizeof pname, "%.*s", (int)(n - 4), e->d_name);
        glow_pass_id id;
        if (glow_pass_from_name(pname, &id))
            covered[id] = true;
    }
    if (dp)
        closedir(dp);
    /* One golden file per pass, named after it. */
    for (int i = 0; i < GLOW_PASS_COUNT; i++) {
        if (!covered[i])
            fprintf(stderr, "no golden file for pass %s\n", glow_pass_name((glow_pass_id)i));
        CHECK(covered[i]);
    }
    printf("%d files, %d cases\n", files, cases_run);
    return CHECK_DONE();
}
