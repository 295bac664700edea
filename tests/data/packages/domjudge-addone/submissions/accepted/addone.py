#!/usr/bin/env python3
# Correct solution - handles all cases including large numbers
# @EXPECTED_RESULTS@: CORRECT
# @EXPECTED_SCORE@: 60
n = int(input())
print(n + 1)
