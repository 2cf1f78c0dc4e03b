# Reads the output of fabtests' runfabtests.sh and prints one line per test:
#     test|result
# test is the command line runfabtests.sh names, without its trailing
# -p "PROVIDER" (so that the names of two providers' runs match); result is
# pass, notrun, excluded or fail. Both of runfabtests.sh's formats are read:
# the plain one ("NAME:   Result", one line per test) and the YAML one of -v
# ("- name: NAME" then "  result: Result"; the output of the test processes
# that -v adds is indented further and never matches). mawk-compatible.

function name_of(s) {
	sub(/[ \t]+-p "[^"]*"[ \t]*$/, "", s)
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

# "Pass", "Notrun", "Excluded", "Fail", "Fail [3/10]", "Pass [10/10]"
function result_of(s) {
	sub(/^[ \t]+/, "", s)
	s = tolower(s)
	if (s ~ /^pass/) return "pass"
	if (s ~ /^notrun/) return "notrun"
	if (s ~ /^excluded/) return "excluded"
	if (s ~ /^fail/) return "fail"
	return ""
}

/^- name:/ {
	name = $0
	sub(/^- name:[ \t]*/, "", name)
	next
}

/^  result:/ {
	if (name == "") next
	r = $0
	sub(/^  result:[ \t]*/, "", r)
	r = result_of(r)
	if (r != "") print name_of(name) "|" r
	name = ""
	next
}

/^[^# \t-]/ {
	if (match($0, /:[ \t]+(Pass|Notrun|Excluded|Fail)( \[[0-9\/]*\])?[ \t]*$/)) {
		r = result_of(substr($0, RSTART + 1))
		print name_of(substr($0, 1, RSTART - 1)) "|" r
	}
}
