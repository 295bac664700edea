// @EXPECTED_RESULTS@: CORRECT
// @EXPECTED_SCORE@: 60
import java.util.Scanner;

public class addone {
    public static void main(String[] args) {
        Scanner sc = new Scanner(System.in);
        long n = sc.nextLong();
        System.out.println(n + 1);
    }
}
