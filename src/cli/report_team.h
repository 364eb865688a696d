/* `ebb report --team T`: one team's monthly report, the form platform
 * teams send finance (docs/TEAMS.md): GPU-hours by offer and market with
 * their prices and cost, the total, idle GPU-hours and their cost,
 * efficiency, spot share, and the top consumers by job type; as a table,
 * --json or --csv. */
#ifndef EBB_REPORT_TEAM_H
#define EBB_REPORT_TEAM_H

#include "cli/cli.h"

enum report_format { REPORT_TABLE, REPORT_JSON, REPORT_CSV };

/* The period is in cli's query (month, or since), if given. Closes cli;
 * returns the exit code. */
int report_team(struct cli *cli, const char *team, enum report_format format);

#endif
