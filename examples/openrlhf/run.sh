#!/usr/bin/env bash
# OpenRLHF (0.11) with truegrade as the remote reward model.
set -euo pipefail

# 1. the reward server (math answers; 429 + Retry-After when overloaded, graceful on SIGTERM)
truegrade serve --grader math --host 0.0.0.0 --port 5000 --workers 8 &
SERVER=$!
trap 'kill -TERM $SERVER' EXIT

# 2. training: each rollout posts {"query", "prompts", "labels"} to /get_reward (OpenRLHF before
#    0.11 spelled these flags --remote_rm_url and --label_key)
python -m openrlhf.cli.train_ppo_ray \
    --reward.remote_url http://127.0.0.1:5000/get_reward \
    --data.label_key answer \
    "$@"
