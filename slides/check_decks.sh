#!/usr/bin/env bash
# Checks that every lecture deck (slides/[0-9][0-9]-*.md) is well formed, so
# that `make slides` builds it and each slide fits on a beamer page:
#   - a YAML title block with a title and a subtitle;
#   - between 10 and 40 slides (`# ` headings outside code blocks);
#   - no slide longer than 16 non-blank lines (its body, fences included);
#   - no line longer than 100 characters outside code blocks and tables;
#   - when pandoc is installed, the slidy HTML conversion gives no warning.
# Prints one line per deck and exits non-zero if any deck breaks a rule; each
# failure names the deck, the slide and the rule.
#
# Usage: bash slides/check_decks.sh [DECK.md ...]   (default: every deck)
set -u
MIN_SLIDES=10 MAX_SLIDES=40 MAX_SLIDE_LINES=16 MAX_LINE=100

decks=()
for d in "$@"; do # decks named on the command line, relative to the caller
    case "$d" in /*) decks+=("$d") ;; *) decks+=("$PWD/$d") ;; esac
done
cd "$(dirname "$0")/.." || exit 2
[ ${#decks[@]} -gt 0 ] || decks=(slides/[0-9][0-9]-*.md)
if [ ! -e "${decks[0]}" ]; then
    echo "check_decks: no deck matches slides/[0-9][0-9]-*.md"
    exit 1
fi

have_pandoc=0
command -v pandoc >/dev/null 2>&1 && have_pandoc=1

# The structural rules, in one pass over the deck. Prints one line per
# violation ("slide 'TITLE': rule") and, last, "SLIDES n".
structure() {
    awk -v min="$MIN_SLIDES" -v max="$MAX_SLIDES" -v maxlines="$MAX_SLIDE_LINES" \
        -v maxlen="$MAX_LINE" '
    function close_slide() {
        if (nslides > 0 && body > maxlines)
            printf "slide \047%s\047: %d non-blank lines, more than %d\n", title, body, maxlines
    }
    BEGIN { state = "start"; nslides = 0; body = 0; title = "(title block)"; fence = "" }
    {
        line = $0
        sub(/\r$/, "", line)
        if (state == "start") {
            if (line != "---") { print "no YAML title block: the first line must be ---"; state = "body" }
            else { state = "yaml"; next }
        }
        if (state == "yaml") {
            if (line == "---" || line == "...") { state = "body"; next }
            if (line ~ /^title:[ \t]*[^ \t]/) has_title = 1
            if (line ~ /^subtitle:[ \t]*[^ \t]/) has_subtitle = 1
            if (length(line) > maxlen)
                printf "title block: line %d has %d characters, more than %d\n", NR, length(line), maxlen
            next
        }
        # Code blocks: a fence of 3+ backticks or tildes opens, the same kind closes.
        if (fence == "" && match(line, /^[ \t]*(```+|~~~+)/)) {
            f = substr(line, RSTART, RLENGTH); gsub(/[ \t]/, "", f); fence = substr(f, 1, 3)
            if (line ~ /[^ \t]/) body++
            next
        }
        if (fence != "") {
            if (index(line, fence) && line ~ /^[ \t]*(```+|~~~+)[ \t]*$/) fence = ""
            if (line ~ /[^ \t]/) body++
            next
        }
        if (line ~ /^# /) {
            close_slide()
            nslides++; body = 0; title = substr(line, 3)
            next
        }
        if (line ~ /[^ \t]/) body++
        if (line !~ /^[ \t]*\|/ && length(line) > maxlen)
            printf "slide \047%s\047: line %d has %d characters, more than %d\n", title, NR, length(line), maxlen
    }
    END {
        if (state == "yaml") print "title block: no closing --- line"
        if (!has_title) print "title block: no title"
        if (!has_subtitle) print "title block: no subtitle"
        if (fence != "") printf "slide \047%s\047: code block never closed\n", title
        close_slide()
        if (nslides < min || nslides > max)
            printf "deck: %d slides, outside %d-%d\n", nslides, min, max
        printf "SLIDES %d\n", nslides
    }' "$1"
}

failed=0
for deck in "${decks[@]}"; do
    out=$(structure "$deck")
    n=$(printf '%s\n' "$out" | sed -n 's/^SLIDES //p')
    problems=$(printf '%s\n' "$out" | grep -v '^SLIDES ')
    if [ "$have_pandoc" = 1 ]; then
        warn=$(pandoc -s -t slidy "$deck" -o /dev/null 2>&1)
        rc=$?
        if [ "$rc" -ne 0 ] || [ -n "$warn" ]; then
            problems+=$'\n'"pandoc (slidy): exit $rc: $(printf '%s' "$warn" | tr '\n' ' ')"
        fi
    fi
    problems=$(printf '%s\n' "$problems" | sed '/^$/d')
    if [ -z "$problems" ]; then
        note=""
        [ "$have_pandoc" = 1 ] || note=", pandoc not installed: HTML build not checked"
        echo "ok     $deck: $n slides$note"
    else
        failed=$((failed + 1))
        echo "FAILED $deck: $n slides"
        printf '%s\n' "$problems" | sed "s|^|  $deck: |"
    fi
done
[ "$failed" -eq 0 ] || { echo "check_decks: $failed deck(s) break the rules above"; exit 1; }
echo "check_decks: ${#decks[@]} deck(s) well formed"
