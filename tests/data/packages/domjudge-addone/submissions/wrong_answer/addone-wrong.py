#!/usr/bin/env python3
# Wrong solution - subtracts instead of adds
# @EXPECTED_RESULTS@: WRONG-ANSWER
# @EXPECTED_SCORE@: 0
n = int(input())
print(n - 1)
