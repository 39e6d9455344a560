#!/usr/bin/env bash
# Reviews a pull request with cairn and writes the comment to post.
#
# Run by cairn-review.yml (next to this file); it runs the same way on your
# machine:  CAIRN_BASE_REF=main docs/ci/review.sh && cat cairn-review.md
#
# In:  CAIRN_BASE_REF   the branch the pull request goes into (required)
#      CAIRN_REVIEW_OUT where to write the comment (default cairn-review.md)
#      CAIRN_STREAM_OUT where to keep cairn's stream-json (default cairn-stream.jsonl)
#      the provider's key as cairn reads it (ANTHROPIC_API_KEY, OPENAI_API_KEY, …)
# Out: the comment file; exit code 0, or cairn's exit code when the review failed
#      (the comment then says why).
set -euo pipefail

base="${CAIRN_BASE_REF:?set CAIRN_BASE_REF to the branch the pull request goes into}"
out="${CAIRN_REVIEW_OUT:-cairn-review.md}"
stream="${CAIRN_STREAM_OUT:-cairn-stream.jsonl}"

# Commands the model runs may read the checkout but write nowhere and reach
# no network. A config already present (a self-hosted runner's) is kept.
config_dir="${XDG_CONFIG_HOME:-$HOME/.config}/cairn"
mkdir -p "$config_dir"
if [ ! -e "$config_dir/config.toml" ]; then
    printf '[sandbox]\nmode = "read-only"\nnetwork = false\n' >"$config_dir/config.toml"
fi

# The diff goes in on standard input (cairn attaches it, capped at 256 KiB).
# Smart mode: reading and searching run, every write or risky command is
# refused (a run never asks), and each refusal is listed in the result.
diff="$(mktemp)"
trap 'rm -f "$diff"' EXIT
git diff --no-color "origin/$base...HEAD" >"$diff" 2>/dev/null \
    || git diff --no-color "$base...HEAD" >"$diff"
status=0
cairn run --mode smart --max-turns 40 --output-format stream-json \
        "Review this pull request's diff (on standard input). Read the files it touches where you need context. List concrete problems (bugs, missing tests, unclear names) with file and line, most important first; say plainly if you find none. Do not change any file." \
        <"$diff" >"$stream" || status=$?

result="$(jq -c 'select(.type == "result")' "$stream" | tail -n 1)"
if [ -z "$result" ]; then
    printf '**cairn review** did not finish (exit code %s); see the job log.\n' "$status" >"$out"
    exit "${status:-1}"
fi
{
    echo "### cairn review"
    echo
    if [ "$(jq -r '.exit_reason' <<<"$result")" = "completed" ]; then
        jq -r '.text' <<<"$result"
    else
        printf 'The review stopped early (%s): %s\n\n' \
            "$(jq -r '.exit_reason' <<<"$result")" "$(jq -r '.error // ""' <<<"$result")"
        jq -r '.text' <<<"$result"
    fi
    echo
    jq -r '"<sub>session \(.session_id // "not saved") · \(.model_calls) model calls · " +
        (if .cost_usd then "$\(.cost_usd * 10000 | round / 10000)" else "cost unknown" end) +
        (if (.permission_denials | length) > 0 then " · \(.permission_denials | length) calls refused" else "" end) +
        "</sub>"' <<<"$result"
} >"$out"
exit "$status"
