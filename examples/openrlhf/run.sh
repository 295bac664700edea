#!/usr/bin/env bash
# OpenRLHF with truegrade as the remote reward model.
set -euo pipefail

# 1. the reward server (math answers; 429 + Retry-After when overloaded, graceful on SIGTERM)
truegrade serve --grader math --host 0.0.0.0 --port 5000 --workers 8 &
SERVER=$!
trap 'kill -TERM $SERVER' EXIT

# 2. training: OpenRLHF posts {"query", "prompts", "labels"} to /get_reward
python -m openrlhf.cli.train_ppo_ray \
    --remote_rm_url http://127.0.0.1:5000/get_reward \
    --label_key answer \
    "$@"
