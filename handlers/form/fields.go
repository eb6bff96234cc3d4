package form

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The checks each plan field gets where it is typed, shared by the
// failover, drill and failback forms: a refused value keeps its text in
// the form and gets its message beside it.

// MaxText is the most characters (not bytes) a free-text field takes: a
// plan's reason, an approval's comment, a rejection's or an override's
// reason. Each is stored in the audit log and shown on the runs list and
// the run page; a longer story belongs in the incident ticket it links to.
const MaxText = 1000

// MaxParallelism is the largest parallelism Flink runs a job with: its
// upper bound for max parallelism, 2^15 (KeyGroupRangeAssignment.
// UPPER_BOUND_MAX_PARALLELISM); a job's parallelism cannot exceed it.
const MaxParallelism = 1 << 15

// checkText refuses a free-text value longer than MaxText characters.
func checkText(e Errors, field, label, v string) {
	if n := utf8.RuneCountInString(v); n > MaxText {
		e[field] = fmt.Sprintf("%s is %s characters long; keep it to %s (link to the incident ticket for the rest).", label, thousands(n), thousands(MaxText))
	}
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// readParallelism reads a typed parallelism: "" is the job's own (0); a
// value that is not a whole number from 1 to MaxParallelism is refused
// with why.
func readParallelism(text string) (int, string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return 0, ""
	}
	n, err := strconv.Atoi(text)
	if err != nil || n < 1 || n > MaxParallelism {
		return 0, fmt.Sprintf("Parallelism %s: want a whole number from 1 to %s (Flink's limit), or empty for the job's own.", strconv.Quote(text), thousands(MaxParallelism))
	}
	return n, ""
}

// flinkJarID is the id Flink's REST gives an uploaded jar (POST
// /jars/upload, GET /jars): a random UUID, "_", the uploaded file's name,
// which Flink requires to end in .jar.
var flinkJarID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}_.+\.jar$`)

// checkJarID says what is wrong with a typed jar id; "" when nothing is.
// listed are the target's jars when Flink answered (known): the id must be
// one of them. When the list is unknown, the id must have Flink's shape.
func checkJarID(id string, listed []string, known bool) string {
	switch {
	case id == "":
		return ""
	case jarIDChars(id) != "":
		return jarIDChars(id)
	case known && !slices.Contains(listed, id):
		return fmt.Sprintf("Jar id %s is not uploaded to this Flink cluster (it lists %s): pick it from the list, or upload the jar first.", strconv.Quote(id), listedJars(listed))
	case !known && !flinkJarID.MatchString(id):
		return fmt.Sprintf("Jar id %s: Flink names an uploaded jar <uuid>_<file name>.jar (as GET /jars lists it, e.g. 9f8c1a2e-…_job.jar); copy it from there.", strconv.Quote(id))
	}
	return ""
}

// jarIDChars refuses what no jar id holds: a path, a query, a control
// character (it goes into the URL of POST /jars/{jarid}/run).
func jarIDChars(id string) string {
	if strings.ContainsAny(id, `/\?#%`) || strings.ContainsFunc(id, unicode.IsControl) {
		return fmt.Sprintf("Jar id %s: a jar id is one name, without /, \\, ?, # or %%: copy it from Flink's jar list.", strconv.Quote(id))
	}
	return ""
}

func listedJars(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	if len(ids) > 5 {
		return strings.Join(ids[:5], ", ") + fmt.Sprintf(" and %d more", len(ids)-5)
	}
	return strings.Join(ids, ", ")
}

// javaClass is a Java class name, package included.
var javaClass = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*(\.[\p{L}_$][\p{L}\p{N}_$]*)*$`)

// checkEntryClass: empty (the jar's manifest names it) or a class name.
func checkEntryClass(c string) string {
	if c == "" || javaClass.MatchString(c) {
		return ""
	}
	return fmt.Sprintf("Entry class %s: want a Java class name such as com.example.Job, or empty for the one the jar's manifest names.", strconv.Quote(c))
}

// checkJob adds to e what is wrong with a restore's job: its jar id, entry
// class, program arguments and parallelism (parallelismErr, as read), each
// under its field's name, prefix+"jar_id" and so on.
func checkJob(e Errors, prefix, jarID, entryClass string, args []string, parallelismErr string) {
	if parallelismErr != "" {
		e[prefix+"parallelism"] = parallelismErr
	}
	if msg := jarIDChars(jarID); msg != "" {
		e[prefix+"jar_id"] = msg
	}
	if msg := checkEntryClass(entryClass); msg != "" {
		e[prefix+"entry_class"] = msg
	}
	for _, a := range args {
		checkText(e, prefix+"args", "A program argument", a)
	}
}

// remoteSchemes are the file systems Flink restores a savepoint from
// besides the local one (its file system plugins).
var remoteSchemes = []string{"s3", "s3a", "s3p", "hdfs", "gs", "abfs", "abfss", "wasb", "wasbs", "oss"}

// checkSavepointURI says what is wrong with a typed savepoint location
// (a savepoint to restore, or where a rewrite writes); "" when nothing
// is. Local ones are an absolute path or a file: URI (file:/x, as Flink
// writes them, file:///x, file://localhost/x); remote ones a URI of a
// file system Flink reads, with its bucket or host.
func checkSavepointURI(label, p string) string {
	bad := func(why string) string { return fmt.Sprintf("%s %s: %s", label, strconv.Quote(p), why) }
	if p == "" {
		return ""
	}
	if strings.ContainsFunc(p, unicode.IsControl) {
		return bad("contains a control character.")
	}
	if strings.HasPrefix(p, "/") {
		return ""
	}
	i := strings.Index(p, ":")
	if i <= 0 || strings.ContainsAny(p[:i], `/\`) {
		return bad("want an absolute path or a URI Flink restores from (file:/savepoints/…, s3://bucket/…, hdfs://namenode/…).")
	}
	scheme := strings.ToLower(p[:i])
	u, err := url.Parse(p)
	if err != nil {
		return bad("not a URI: " + err.Error())
	}
	switch {
	case scheme == "file":
		if u.Host != "" && u.Host != "localhost" {
			return bad(fmt.Sprintf("a file: URI names a path on this machine, not on host %q; write file:/path.", u.Host))
		}
		if !strings.HasPrefix(u.Path, "/") || u.Path == "/" {
			return bad("a file: URI needs an absolute path below / (file:/savepoints/savepoint-…).")
		}
	case slices.Contains(remoteSchemes, scheme):
		if u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return bad(fmt.Sprintf("want %s://<bucket or host>/<path>.", scheme))
		}
	default:
		return bad(fmt.Sprintf("Flink restores from file:, %s:// here, not %s:.", strings.Join(remoteSchemes, "://, "), scheme))
	}
	return ""
}
