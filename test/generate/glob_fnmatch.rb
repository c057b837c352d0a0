# The referee of test/generate/glob_ruby_diff.cpp: GitLab's own rules:changes match
# (lib/gitlab/ci/build/rules/rule/clause/changes.rb) on every pair of a file of
# NUL-separated pattern, path, pattern, path, ... Prints one character per pair:
# 1 (matches), 0 (does not) or E (Ruby raised). Usage: ruby glob_fnmatch.rb PAIRS
flags = File::FNM_PATHNAME | File::FNM_DOTMATCH | File::FNM_EXTGLOB
fields = File.binread(ARGV.fetch(0)).split("\0", -1)
fields.pop if fields.last == ""
abort "glob_fnmatch.rb: odd number of fields (#{fields.size})" if fields.size.odd?
out = +""
fields.each_slice(2) do |pattern, path|
  pattern.force_encoding(Encoding::UTF_8)
  path.force_encoding(Encoding::UTF_8)
  begin
    out << (File.fnmatch?(pattern, path, flags) ? "1" : "0")
  rescue StandardError
    out << "E"
  end
end
$stdout.write(out)
