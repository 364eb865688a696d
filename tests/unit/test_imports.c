/* The import graph of src/: which module includes which, read from the
 * #include lines of the sources themselves, and which calls which, read
 * from the objects make built (nm), so that the layering
 * docs/ARCHITECTURE.md draws cannot drift from the code.
 *
 * A module is FOLDER/NAME: NAME.c and NAME.h together. A header with no
 * .c of its own in a folder with a front end (store/engine.h,
 * provider/kind.h: the contract behind store.h and provider.h) is part of
 * that front end. A module split over several files shares a private
 * header, FOLDER/NAME_internal.h: each file that includes it is a part of
 * FOLDER/NAME. The checks:
 * - no cycle among modules (a cycle is printed, module by module);
 * - a folder includes only from the folders below it (FOLDERS);
 * - only serve's wiring and the command that runs it include serve/server.h;
 * - a private header is included from its own folder only;
 * - a call from one module into another goes to a folder it may include
 *   from, to a function its public header declares (not only a private
 *   one), and closes no cycle among modules, calls and includes together. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define MAX_MODULES 256
#define MAX_EDGES 2048

/* Each folder, and the folders it may include from. */
static const struct {
	const char *folder, *may;
} FOLDERS[] = {
	{"common", ""},
	{"store", "common"},
	{"provider", "common"},
	{"policy", "common"},
	{"worker", "common"},
	{"sim", "common policy"},
	{"serve", "common store provider policy"},
	{"cli", "common store provider policy serve sim worker"},
};

struct graph {
	char names[MAX_MODULES][96]; /* FOLDER/NAME */
	int n;
	int from[MAX_EDGES], to[MAX_EDGES];
	char where[MAX_EDGES][160]; /* the file and the header, for messages */
	int nedges;
	int has_c[MAX_MODULES];
};

static int node(struct graph *g, const char *name)
{
	for (int i = 0; i < g->n; i++) {
		if (strcmp(g->names[i], name) == 0)
			return i;
	}
	if (g->n == MAX_MODULES)
		fail_msg("more than %d modules in src/", MAX_MODULES);
	snprintf(g->names[g->n], sizeof g->names[0], "%s", name);
	return g->n++;
}

/* "FOLDER/NAME.c" -> "FOLDER/NAME"; a private header
 * "FOLDER/NAME_internal.h" is module FOLDER/NAME's too. */
static void module_of(const char *path, char *out, size_t size)
{
	size_t n = strcspn(path, "."), k = strlen("_internal");

	if (n > k && strncmp(path + n - k, "_internal", k) == 0)
		n -= k;
	if (n >= size)
		n = size - 1;
	memcpy(out, path, n);
	out[n] = '\0';
}

static void read_file_edges(struct graph *g, const char *root, const char *rel)
{
	char path[4200], mod[96], line[512];
	FILE *f;
	int from;

	snprintf(path, sizeof path, "%s/%s", root, rel);
	if (!(f = fopen(path, "r")))
		fail_msg("cannot read %s", path);
	module_of(rel, mod, sizeof mod);
	from = node(g, mod);
	if (strstr(rel, ".c"))
		g->has_c[from] = 1;
	while (fgets(line, sizeof line, f)) {
		char inc[128], target[96];
		if (sscanf(line, "#include \"%127[^\"]\"", inc) != 1)
			continue;
		module_of(inc, target, sizeof target);
		if (strcmp(target, mod) == 0)
			continue;
		if (g->nedges == MAX_EDGES)
			fail_msg("more than %d includes in src/", MAX_EDGES);
		g->from[g->nedges] = from;
		g->to[g->nedges] = node(g, target);
		snprintf(g->where[g->nedges++], sizeof g->where[0], "%.60s includes %.60s", rel, inc);
	}
	fclose(f);
}

static void read_tree(struct graph *g, const char *root)
{
	DIR *top = opendir(root), *sub;
	struct dirent *d, *e;
	char dir[4200], rel[512];

	if (!top)
		fail_msg("cannot read %s", root);
	while ((d = readdir(top))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof dir, "%s/%s", root, d->d_name);
		if (!(sub = opendir(dir)))
			fail_msg("src/%s: expected a folder; src/ holds only folders", d->d_name);
		while ((e = readdir(sub))) {
			size_t len = strlen(e->d_name);
			if (len < 3 || (strcmp(e->d_name + len - 2, ".c") != 0 && strcmp(e->d_name + len - 2, ".h") != 0))
				continue;
			snprintf(rel, sizeof rel, "%s/%s", d->d_name, e->d_name);
			read_file_edges(g, root, rel);
		}
		closedir(sub);
	}
	closedir(top);
}

/* Header-only modules that belong to their folder's front end. */
static void merge_contracts(struct graph *g, int *owner)
{
	for (int i = 0; i < g->n; i++) {
		char folder[96], front[200];
		int f = -1;
		owner[i] = i;
		if (g->has_c[i] || !strchr(g->names[i], '/'))
			continue;
		snprintf(folder, sizeof folder, "%s", g->names[i]);
		*strchr(folder, '/') = '\0';
		snprintf(front, sizeof front, "%s/%s", folder, folder);
		for (int j = 0; j < g->n; j++) {
			if (strcmp(g->names[j], front) == 0)
				f = j;
		}
		if (f >= 0)
			owner[i] = f;
	}
}

static const char *folder_may(const char *folder)
{
	for (size_t k = 0; k < sizeof FOLDERS / sizeof *FOLDERS; k++) {
		if (strcmp(FOLDERS[k].folder, folder) == 0)
			return FOLDERS[k].may;
	}
	return NULL;
}

/* Is word one of the space-separated words of list? */
static int listed(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(list, word); p; p = strstr(p + 1, word)) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	}
	return 0;
}

static const char *src_root(void)
{
	const char *src = getenv("EBB_SRC");
	return harness_fmt("%s/src", src && *src ? src : ".");
}

static void folders_include_only_below(void **state)
{
	struct graph *g = calloc(1, sizeof *g);
	int bad = 0;

	(void)state;
	read_tree(g, src_root());
	for (int e = 0; e < g->nedges; e++) {
		char a[96], b[96];
		const char *may;
		snprintf(a, sizeof a, "%s", g->names[g->from[e]]);
		snprintf(b, sizeof b, "%s", g->names[g->to[e]]);
		if (!strchr(b, '/'))
			continue; /* a test's or a library's header */
		*strchr(a, '/') = '\0';
		*strchr(b, '/') = '\0';
		if (strcmp(a, b) == 0)
			continue;
		if (!(may = folder_may(a))) {
			print_message("src/%s: a folder this test does not know; add it to FOLDERS\n", a);
			bad++;
		} else if (!listed(may, b)) {
			print_message("%s: %s may include from %s only\n", g->where[e], a, *may ? may : "itself");
			bad++;
		}
	}
	free(g);
	assert_int(bad, 0);
}

/* Depth-first search; a back edge is a cycle, printed from its start. */
static int find_cycle(const struct graph *g, const int *owner, int v, int *color, int *stack, int depth)
{
	color[v] = 1;
	stack[depth] = v;
	for (int e = 0; e < g->nedges; e++) {
		int a = owner[g->from[e]], b = owner[g->to[e]];
		if (a != v || a == b)
			continue;
		if (color[b] == 1) {
			int k = depth;
			while (stack[k] != b)
				k--;
			print_message("import cycle:");
			for (; k <= depth; k++)
				print_message(" %s ->", g->names[stack[k]]);
			print_message(" %s\n", g->names[b]);
			return 1;
		}
		if (color[b] == 0 && find_cycle(g, owner, b, color, stack, depth + 1))
			return 1;
	}
	color[v] = 2;
	return 0;
}

static void no_import_cycle(void **state)
{
	struct graph *g = calloc(1, sizeof *g);
	int owner[MAX_MODULES], color[MAX_MODULES] = {0}, stack[MAX_MODULES], cycles = 0;

	(void)state;
	read_tree(g, src_root());
	merge_contracts(g, owner);
	for (int v = 0; v < g->n && !cycles; v++) {
		if (owner[v] == v && color[v] == 0)
			cycles += find_cycle(g, owner, v, color, stack, 0);
	}
	assert_true(g->n > 40); /* the tree was read */
	free(g);
	assert_int(cycles, 0);
}

static void only_the_wiring_knows_the_server(void **state)
{
	struct graph *g = calloc(1, sizeof *g);
	int bad = 0;

	(void)state;
	read_tree(g, src_root());
	for (int e = 0; e < g->nedges; e++) {
		const char *from = g->names[g->from[e]];
		if (strcmp(g->names[g->to[e]], "serve/server") == 0 && strcmp(from, "cli/cmd_serve") != 0) {
			print_message("%s: only cli/cmd_serve.c starts serve\n", g->where[e]);
			bad++;
		}
	}
	free(g);
	assert_int(bad, 0);
}

/* "FOLDER/NAME_internal.h" -> "FOLDER/NAME" in out; 0 if inc is no
 * private header. */
static int private_module(const char *inc, char *out, size_t size)
{
	size_t n = strlen(inc), k = strlen("_internal.h");

	if (n <= k || strcmp(inc + n - k, "_internal.h") != 0 || n - k >= size)
		return 0;
	memcpy(out, inc, n - k);
	out[n - k] = '\0';
	return 1;
}

/* The module FOLDER/NAME.c is a part of: the private header of its
 * folder that it includes, or itself. */
static void part_of(const char *root, const char *file, char *out, size_t size)
{
	char path[4200], line[512], inc[128], mod[96];
	size_t folder = strcspn(file, "/") + 1;
	FILE *f;

	snprintf(out, size, "%s", file);
	snprintf(path, sizeof path, "%s/%s.c", root, file);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "#include \"%127[^\"]\"", inc) == 1 && private_module(inc, mod, sizeof mod) &&
		    strncmp(mod, file, folder) == 0) {
			snprintf(out, size, "%s", mod);
			break;
		}
	}
	fclose(f);
}

static void private_headers_stay_home(void **state)
{
	struct graph *g = calloc(1, sizeof *g);
	int bad = 0;

	(void)state;
	read_tree(g, src_root());
	for (int e = 0; e < g->nedges; e++) {
		char mod[96];
		const char *inc = strstr(g->where[e], " includes ");
		size_t folder = strcspn(g->names[g->from[e]], "/");
		if (!inc || !private_module(inc + strlen(" includes "), mod, sizeof mod))
			continue;
		if (strncmp(mod, g->names[g->from[e]], folder + 1) != 0) {
			print_message("%s: a private header, for its own folder's files only\n", g->where[e]);
			bad++;
		}
	}
	free(g);
	assert_int(bad, 0);
}

#define MAX_SYMBOLS 8192

/* What the objects define and call, by file (FOLDER/NAME, of a source
 * that exists: a renamed source's old object is left out). */
struct calls {
	struct {
		char name[80];
		char file[96];
	} def[MAX_SYMBOLS], use[MAX_SYMBOLS * 2];
	int ndef, nuse;
};

/* The build directory, where make put the objects: EBB_BIN's. */
static const char *build_dir(void)
{
	const char *bin = getenv("EBB_BIN");
	const char *slash = bin ? strrchr(bin, '/') : NULL;

	if (!slash)
		fail_msg("EBB_BIN is not set: make test sets it, and the objects are beside it");
	return harness_fmt("%.*s", (int)(slash - bin), bin);
}

static void read_symbols(struct calls *c, const char *build, const char *root)
{
	char line[600], path[600], addr[80], type[80], name[80], src[4300], cmd[4300];
	FILE *p;

	snprintf(cmd, sizeof cmd, "cd '%s' && nm -A src/*/*.o", build);
	if (!(p = popen(cmd, "r")))

		fail_msg("cannot run nm");
	while (fgets(line, sizeof line, p)) {
		char *colon = strchr(line, ':'), file[96];
		int n;
		if (!colon || strncmp(line, "src/", 4) != 0)
			continue;
		*colon = '\0';
		snprintf(path, sizeof path, "%s", line + 4);
		path[strlen(path) - 2] = '\0'; /* .o */
		snprintf(src, sizeof src, "%s/%s.c", root, path);
		if (access(src, F_OK) != 0)
			continue;
		/* "ADDRESS TYPE NAME", or "TYPE NAME" for an undefined one. */
		n = sscanf(colon + 1, "%79s %79s %79s", addr, type, name);
		if (n == 2) {
			snprintf(name, sizeof name, "%s", type);
			snprintf(type, sizeof type, "%s", addr);
		} else if (n != 3) {
			continue;
		}
		snprintf(file, sizeof file, "%.95s", path);
		if (strcmp(type, "T") == 0 && c->ndef < MAX_SYMBOLS) {
			snprintf(c->def[c->ndef].name, sizeof c->def[0].name, "%s", name);
			snprintf(c->def[c->ndef++].file, sizeof c->def[0].file, "%s", file);
		} else if (strcmp(type, "U") == 0 && c->nuse < MAX_SYMBOLS * 2) {
			snprintf(c->use[c->nuse].name, sizeof c->use[0].name, "%s", name);
			snprintf(c->use[c->nuse++].file, sizeof c->use[0].file, "%s", file);
		}
	}
	if (pclose(p) != 0)
		fail_msg("nm failed on %s/src/*/*.o", build);
	assert_true(c->ndef > 200); /* the objects were read */
}

/* Does a public header of folder declare name (name, then a parenthesis)? */
static int declared_publicly(const char *root, const char *folder, const char *name)
{
	char dir[4400], file[4700];
	DIR *d;
	struct dirent *e;
	int found = 0;

	snprintf(dir, sizeof dir, "%s/%s", root, folder);
	d = opendir(dir);
	while (d && !found && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char *text, *at;
		if (len < 3 || strcmp(e->d_name + len - 2, ".h") != 0 || strstr(e->d_name, "_internal.h"))
			continue;
		snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
		text = harness_read_file(file, NULL);
		for (at = text ? strstr(text, name) : NULL; at && !found; at = strstr(at + 1, name)) {
			char after = at[strlen(name)];
			found = (at == text || !(isalnum((unsigned char)at[-1]) || at[-1] == '_')) &&
				(after == '(' || after == ' ');
		}
		free(text);
	}
	if (d)
		closedir(d);
	return found;
}

static void calls_follow_the_layers(void **state)
{
	struct calls *c = calloc(1, sizeof *c);
	struct graph *g = calloc(1, sizeof *g);
	char root[4200], build[4200];
	int owner[MAX_MODULES], color[MAX_MODULES] = {0}, stack[MAX_MODULES], bad = 0, cycles = 0;

	(void)state;
	/* Copies: harness_fmt's buffers are reused by the calls below. */
	snprintf(root, sizeof root, "%s", src_root());
	snprintf(build, sizeof build, "%s", build_dir());
	read_symbols(c, build, root);
	read_tree(g, root);
	for (int u = 0; u < c->nuse; u++) {
		for (int d = 0; d < c->ndef; d++) {
			char from[96], to[96], af[96], bf[96];
			const char *may;
			if (strcmp(c->use[u].name, c->def[d].name) != 0)
				continue;
			part_of(root, c->use[u].file, from, sizeof from);
			part_of(root, c->def[d].file, to, sizeof to);
			if (strcmp(from, to) == 0)
				break;
			snprintf(af, sizeof af, "%s", from);
			snprintf(bf, sizeof bf, "%s", to);
			*strchr(af, '/') = '\0';
			*strchr(bf, '/') = '\0';
			may = folder_may(af);
			if (strcmp(af, bf) != 0 && (!may || !listed(may, bf))) {
				print_message("%s.c calls %s() of %s.c: %s may call into %s only\n", c->use[u].file,
					      c->use[u].name, c->def[d].file, af, may && *may ? may : "itself");
				bad++;
			} else if (!declared_publicly(root, bf, c->use[u].name)) {
				print_message("%s.c calls %s() of %s.c, which no public header of %s/ declares: a"
					      " private function of module %s\n", c->use[u].file, c->use[u].name,
					      c->def[d].file, bf, to);
				bad++;
			}
			/* The call joins the import graph, module to module. */
			if (g->nedges == MAX_EDGES)
				fail_msg("more than %d edges", MAX_EDGES);
			g->from[g->nedges] = node(g, from);
			g->to[g->nedges] = node(g, to);
			snprintf(g->where[g->nedges++], sizeof g->where[0], "%.60s.c calls %.60s()", c->use[u].file,
				 c->use[u].name);
			break;
		}
	}
	/* The includes of a module's parts are the module's. */
	for (int e = 0; e < g->nedges; e++) {
		char mod[96];
		part_of(root, g->names[g->from[e]], mod, sizeof mod);
		g->from[e] = node(g, mod);
		part_of(root, g->names[g->to[e]], mod, sizeof mod);
		g->to[e] = node(g, mod);
	}
	merge_contracts(g, owner);
	for (int v = 0; v < g->n && !cycles; v++) {
		if (owner[v] == v && color[v] == 0)
			cycles += find_cycle(g, owner, v, color, stack, 0);
	}
	free(c);
	free(g);
	assert_int(bad, 0);
	assert_int(cycles, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folders_include_only_below),
		cmocka_unit_test(no_import_cycle),
		cmocka_unit_test(only_the_wiring_knows_the_server),
		cmocka_unit_test(private_headers_stay_home),
		cmocka_unit_test(calls_follow_the_layers),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
