// @EXPECTED_RESULTS@: CORRECT
// @EXPECTED_SCORE@: 60
#include <iostream>
using namespace std;

int main() {
    long long n;
    cin >> n;
    cout << n + 1 << endl;
    return 0;
}
