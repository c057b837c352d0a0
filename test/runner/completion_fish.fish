# Integration test of `envgate completion fish`: the script the real binary prints,
# sourced into fish, and fish's own completion machinery (`complete -C`, what a TAB
# lists) asked for commands, options, -o values, environments from envgate.yml,
# kubeconfig contexts and file names after an option that takes a file.
# Usage: fish -N completion_fish.fish ENVGATE_BINARY FIXTURES
set envgate $argv[1]
set fixtures $argv[2]
set -g failures 0
set work (mktemp -d)
cd $work; or exit 1
set -x PATH (dirname $envgate) $PATH
cp $fixtures/config/envgate.yml envgate.yml # environments gstg and gprd
printf '%s\n' 'contexts:' '- name: gke-prod' '  context: {cluster: p}' '- name: kind-dev' \
    '  context: {cluster: d}' >kubeconfig
set -x KUBECONFIG $work/kubeconfig
touch notes.txt

envgate completion fish | source; or begin
    echo "FAIL: the script does not load"
    exit 1
end

# want EXPECTED LINE: fish's candidates for LINE, sorted, without descriptions.
function want
    set -l got (complete -C"$argv[2]" | string replace -r '\t.*' '' | sort | string join ' ')
    if test "$got" != "$argv[1]"
        echo "FAIL: $argv[2]: want '$argv[1]', got '$got'"
        set -g failures (math $failures + 1)
    end
end

want "lint lock" "envgate l"
want "--help -h check" "envgate config "
want --wait-timeout "envgate run --wa"
want "" "envgate status --wa"
want "json text" "envgate run -o "
want "json prometheus text" "envgate status --output "
want "gprd gstg" "envgate run --env "
want "gke-prod kind-dev" "envgate gate --context "
want notes.txt "envgate run --config no"
want check "envgate help config ch"
want fish "envgate completion f"

rm -rf $work
test $failures -eq 0; and echo "completion_fish: ok"
exit $failures
