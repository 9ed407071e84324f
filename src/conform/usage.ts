/** The help text of `tiny-harness conform`, apart from the kit so that `--help` does not load it. */
export const CONFORM_USAGE = `conform: check, rule by rule, that the A2A server at <url> implements the Commands extension v1.
  tiny-harness conform <url> [--transport jsonrpc|http+json|grpc|all] [--only CMD-4,CMD-8] [--command NAME]
                       [--allow-model] [--json] [--header "Name: value"]...
  --transport T   check only this transport (default all the card declares)
  --only RULES    only the checks of these rules, comma-separated
  --command "NAME [ARGS]"
                  the command to send, with its arguments (default: one that takes no arguments);
                  one that starts a sub-task lets task_ref be checked (CMD-30)
  --allow-model   also send ordinary messages (to check they are not answered as commands):
                  a conforming server gives them to its model
  --json          print the report as JSON
  Exit code 0 when nothing failed, 1 when a check failed, 2 on bad usage, 3 when the server
  cannot be asked, 4 when its card does not declare the extension.`;
