/* The import graph of src/: which module includes which, read from the
 * #include lines of the sources themselves, so that the layering
 * docs/ARCHITECTURE.md draws cannot drift from the code.
 *
 * A module is FOLDER/NAME: NAME.c and NAME.h together. A header with no
 * .c of its own in a folder with a front end (store/engine.h,
 * provider/kind.h: the contract behind store.h and provider.h) is part of
 * that front end. The checks:
 * - no cycle among modules (a cycle is printed, module by module);
 * - a folder includes only from the folders below it (FOLDERS);
 * - only serve's wiring and the command that runs it include serve/server.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* "FOLDER/NAME.c" -> "FOLDER/NAME". */
static void module_of(const char *path, char *out, size_t size)
{
	size_t n = strcspn(path, ".");

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(folders_include_only_below),
		cmocka_unit_test(no_import_cycle),
		cmocka_unit_test(only_the_wiring_knows_the_server),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
