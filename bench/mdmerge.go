package main

import (
	"fmt"
	"os"
	"strings"
)

// partial reports whether o runs only some row groups.
func (o options) partial() bool { return len(o.only) < len(rowGroups()) }

// mergeMarkdown writes the tables of a partial run into the report at
// path, keeping everything else: a section of the same title is replaced
// in place, a new one is added after the last, and the Targets rows of
// this run replace the rows of the same target (or are added). The header
// still describes the last full run, so each section written here says
// when and at which commit it was measured. It reports false, writing
// nothing, when path holds no generated report to merge into.
func mergeMarkdown(path string, m machine, tables []table) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil {
		return false, nil
	}
	gen, hand, ok := strings.Cut(string(old), handMarker)
	if !ok {
		return false, nil
	}
	pre, sections := splitSections(gen)
	if len(sections) == 0 {
		return false, nil
	}
	for _, t := range tables {
		if t.title == "Targets" {
			for i, s := range sections {
				if sectionTitle(s) == t.title {
					sections[i] = mergeRows(s, t.rows)
				}
			}
			continue
		}
		t.notes = append(t.notes, fmt.Sprintf("Measured %s at commit %s by a run of this section alone; the header describes the last full run.", m.date, m.commit))
		var b strings.Builder
		t.markdown(&b)
		sections = replaceSection(sections, t.title, b.String())
	}
	out := pre + strings.Join(sections, "") + handMarker + hand
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return true, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}

// splitSections cuts a report at its "## " headings: what comes before the
// first, and each section with its heading.
func splitSections(s string) (pre string, sections []string) {
	parts := strings.Split(s, "\n## ")
	pre = parts[0] + "\n"
	for _, p := range parts[1:] {
		sections = append(sections, "## "+p+"\n")
	}
	if len(sections) > 0 { // the last section already ended with the text's own newline
		last := len(sections) - 1
		sections[last] = strings.TrimSuffix(sections[last], "\n")
	}
	return pre, sections
}

func sectionTitle(s string) string {
	line, _, _ := strings.Cut(strings.TrimPrefix(s, "## "), "\n")
	return line
}

// replaceSection replaces the section titled title, or adds text last.
func replaceSection(sections []string, title, text string) []string {
	for i, s := range sections {
		if sectionTitle(s) == title {
			sections[i] = text
			return sections
		}
	}
	return append(sections, text)
}

// mergeRows puts rows into a section's table: a row whose first cell
// names a row there replaces it, any other is added after the last row.
func mergeRows(section string, rows [][]string) string {
	lines := strings.Split(section, "\n")
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "| ") {
			last = i
		}
	}
	if last < 0 {
		return section
	}
	for _, r := range rows {
		line := "| " + strings.Join(r, " | ") + " |"
		at := -1
		for i, l := range lines {
			if strings.HasPrefix(l, "| "+r[0]+" |") {
				at = i
			}
		}
		if at >= 0 {
			lines[at] = line
			continue
		}
		lines = append(lines[:last+1], append([]string{line}, lines[last+1:]...)...)
		last++
	}
	return strings.Join(lines, "\n")
}
