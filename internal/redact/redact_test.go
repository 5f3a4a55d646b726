package redact

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgresql://alice:S3cretPW@db.example/x", "postgresql://alice:***@db.example/x"},
		{"driver pg_x://alice:S3cretPW@h/db: dlopen pg_x://alice:S3cretPW@h/db: no such file",
			"driver pg_x://alice:***@h/db: dlopen pg_x://alice:***@h/db: no such file"},
		{"1pg://alice:S3cretPW@h", "1pg://alice:***@h"},
		{"postgresql:/alice:S3cretPW@h/db", "postgresql:/alice:***@h/db"},
		{"postgresql:alice:S3cretPW@h", "postgresql:***@h"},
		{"alice:S3cretPW@tcp(h:3306)/db", "alice:***@tcp(h:3306)/db"},
		{`uri "postgres://alice:S3c/ret@PW@h/db"`, `uri "postgres://alice:***@h/db"`},
		{"POSTGRESQL://ALICE:S3cretPW@H", "POSTGRESQL://ALICE:***@H"},
		{"postgresql://alice:@h", "postgresql://alice:***@h"},
		{"pg://alice:/S3cretPW@h", "pg://alice:***@h"},
		{"host=h user=alice password=S3cretPW dbname=x", "host=h user=alice password=*** dbname=x"},
		{"host=h password='S3 cret PW' dbname=x", "host=h password=*** dbname=x"},
		{"Driver={x};UID=alice;PWD=S3cretPW;Server=h", "Driver={x};UID=alice;PWD=***;Server=h"},
		{"https://h/db?user=alice&password=S3cretPW&x=1", "https://h/db?user=alice&password=***&x=1"},
		{`{"password": "S3cretPW", "user": "alice"}`, `{"password": ***, "user": "alice"}`},
		{"adbc.snowflake.sql.auth_token=S3cretPW", "adbc.snowflake.sql.auth_token=***"},
		// Nothing to mask.
		{"postgresql://alice@h/db", "postgresql://alice@h/db"},
		{"driver libadbc_driver_sqlite.so: not found", "driver libadbc_driver_sqlite.so: not found"},
		{"C:\\drivers\\x.dll at 12:30", "C:\\drivers\\x.dll at 12:30"},
		{"ratio 3:4 and a@b", "ratio 3:4 and a@b"},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestError(t *testing.T) {
	inner := fmt.Errorf("dlopen postgresql://alice:S3cretPW@h: %w", fs.ErrNotExist)
	err := Error(fmt.Errorf("driver: %w", inner))
	if strings.Contains(err.Error(), "S3cretPW") || !strings.Contains(err.Error(), "alice:***@h") {
		t.Errorf("Error() = %q", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Error("the masked error does not match what the original matched")
	}
	if errors.Unwrap(err) != nil {
		t.Error("the original text is reachable through Unwrap")
	}
	if plain := errors.New("nothing secret"); Error(plain) != plain {
		t.Error("an error without credentials was wrapped")
	}
	if Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}

// Whatever characters a password holds (but white space and quotes, which
// end a connection string in a message), it is masked in every shape of
// connection string, scheme spelled any way.
func TestPasswordNeverShown(t *testing.T) {
	const chars = "abcXYZ019!#$%^&*()-_=+[]{}|;:,.<>/?~`@\\"
	shapes := []string{"postgresql://alice:%s@h/db", "pg_x://alice:%s@h", "1pg://alice:%s@h", "postgresql:/alice:%s@h",
		"x+y.z-w://:%s@h", `driver "pg://u:%s@h/db" not found`, "password=%s", "PWD=%s;", "a=1&password=%s&b=2", "alice:%s@tcp(h)/db"}
	seed := uint32(1)
	for range 2000 {
		n := 8 + int(seed%12)
		pw := make([]byte, n)
		for i := range pw {
			seed = seed*1664525 + 1013904223
			pw[i] = chars[int(seed>>16)%len(chars)]
		}
		secret := "Zq" + string(pw) // never empty, never all punctuation
		for _, shape := range shapes {
			in := fmt.Sprintf(shape, secret)
			if got := String(in); strings.Contains(got, secret) {
				t.Fatalf("String(%q) = %q shows the password", in, got)
			}
		}
	}
}
