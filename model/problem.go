package model

// RawErrSep separates a cluster error's sentence from the client's own
// error in its text (kafka.Explain writes it), so a page can show the
// sentence and fold the client's words away.
const RawErrSep = " — the client said: "
