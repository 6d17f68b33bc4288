# control: APPS/LeetCode-style tests that construct the candidate's Solution run isolated
# tests: solution.tests
# expect: passed
# judge: isolated
class Solution:
    def twoSum(self, nums, target):
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
