# shellcheck shell=sh
# What the stand-ins in bin/ share. Each stands in for a cloud's CLI in
# the contract tests of providers/ (tests/integration/
# test_provider_scripts.c): it records the call and answers with the
# shapes and error messages of its provider's published documentation,
# never reaching a cloud.
#
#   STANDIN_LOG       a file: each call appends a line, the program's name
#                     and its arguments
#   STANDIN_DIR       a directory: what a call sent besides its arguments
#                     (standard input, files named on its command line)
#   STANDIN_SCENARIO  which answer: ok (the default), garbage (text that
#                     is not JSON, and success), or an error the stand-in
#                     names in its header
# The stand-ins read scenario and page.
# shellcheck disable=SC2034
set -eu

scenario=${STANDIN_SCENARIO:-ok}
printf '%s\n' "${0##*/} $*" >>"$STANDIN_LOG"

# keep NAME FILE: appends what a call sent to STANDIN_DIR/NAME.
keep() { cat -- "$2" >>"$STANDIN_DIR/$1"; }

# What no documented API answers (the scenario garbage), with success.
page='<html><body>502 Bad Gateway</body></html>'
