// Package toolsearch ranks a catalog of tools for a request written in
// plain language, best first, so that a model facing hundreds of bridged
// tools is shown only the few it needs.
//
// [New] builds an in-memory index once; [Index.Search] answers many
// queries from it. The ranking is BM25F, a field-weighted BM25, over what a
// tool says about itself: its name (split into words, with the server's
// prefix taken off), title, description, the names and descriptions of its
// input parameters, and the name of its server. Words are lower-cased,
// stemmed (Snowball English) and stripped of stop words; a small table of
// aliases for the verbs and nouns tools are named with (get, fetch, read;
// issue, ticket, bug; …) lets a request match a tool that words it
// differently. A request that names a server ("… on GitLab", "in mongo")
// boosts that server's tools, and URLs and file names in a request count
// as "url" and "file". Nothing is fetched and no model is loaded: building
// the index of 10,000 tools takes under a second and a query well under a
// millisecond, so a consumer can rebuild the index whenever its registry
// changes.
//
// [NewBaseline] is plain BM25 over one bag of words (name, description and
// parameter names) with the same word analysis and neither fields nor
// aliases, [NewRawBaseline] the same on words as written: the references
// that the retrieval benchmark (package retrieval, docs/toolsearch.md)
// compares [New] with.
package toolsearch
