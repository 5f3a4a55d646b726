package adbc

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// IngestStreamOptions are the optional settings of IngestStream and
// IngestStreamContext.
type IngestStreamOptions struct {
	// Catalog is the target table's catalog; empty for the default.
	Catalog string
	// DBSchema is the target table's database schema; empty for the
	// default.
	DBSchema string
	// Temporary makes the target a temporary table.
	Temporary bool
	// Extra holds driver-specific statement options, set after the others.
	Extra map[string]string
}

// IngestStream bulk-loads reader into the table targetTable of cnxn and
// returns the number of rows written, as ExecuteUpdate reports it, or -1 on
// failure. ingestMode is one of the OptionValueIngestMode values. It does
// the usual steps on a new statement: set the target and mode, bind the
// stream, set the options of opt (Extra in key order), execute the update
// and close the statement. Errors say which step failed and wrap the
// driver's error. As in arrow-adbc, an error from closing the statement is
// not reported.
//
// IngestStream is a helper, not part of the ADBC specification.
func IngestStream(ctx context.Context, cnxn Connection, reader array.RecordReader, targetTable, ingestMode string, opt IngestStreamOptions) (int64, error) {
	stmt, err := cnxn.NewStatement()
	if err != nil {
		return -1, fmt.Errorf("error during ingestion: NewStatement: %w", err)
	}
	defer func() { _ = stmt.Close() }()
	return ingest(ingestSteps{
		setOption:  stmt.SetOption,
		bindStream: func(r array.RecordReader) error { return stmt.BindStream(ctx, r) },
		execute:    func() (int64, error) { return stmt.ExecuteUpdate(ctx) },
	}, reader, targetTable, ingestMode, opt)
}

// IngestStreamContext is IngestStream for a ConnectionWithContext: every
// call on the statement, Close included, gets ctx.
//
// IngestStreamContext is a helper, not part of the ADBC specification.
func IngestStreamContext(ctx context.Context, cnxn ConnectionWithContext, reader array.RecordReader, targetTable, ingestMode string, opt IngestStreamOptions) (int64, error) {
	stmt, err := cnxn.NewStatement(ctx)
	if err != nil {
		return -1, fmt.Errorf("error during ingestion: NewStatement: %w", err)
	}
	defer func() { _ = stmt.Close(ctx) }()
	return ingest(ingestSteps{
		setOption:  func(k, v string) error { return stmt.SetOption(ctx, k, v) },
		bindStream: func(r array.RecordReader) error { return stmt.BindStream(ctx, r) },
		execute:    func() (int64, error) { return stmt.ExecuteUpdate(ctx) },
	}, reader, targetTable, ingestMode, opt)
}

// ingestSteps are the statement calls a bulk ingestion makes, whichever
// flavour of statement runs it.
type ingestSteps struct {
	setOption  func(key, value string) error
	bindStream func(array.RecordReader) error
	execute    func() (int64, error)
}

func ingest(s ingestSteps, reader array.RecordReader, targetTable, ingestMode string, opt IngestStreamOptions) (int64, error) {
	fail := func(step string, err error) (int64, error) {
		return -1, fmt.Errorf("error during ingestion: %s: %w", step, err)
	}
	// The target goes first: some drivers need it before anything else.
	if err := s.setOption(OptionKeyIngestTargetTable, targetTable); err != nil {
		return fail("SetOption(target_table="+targetTable+")", err)
	}
	if err := s.setOption(OptionKeyIngestMode, ingestMode); err != nil {
		return fail("SetOption(mode="+ingestMode+")", err)
	}
	if err := s.bindStream(reader); err != nil {
		return fail("BindStream", err)
	}
	if opt.Catalog != "" {
		if err := s.setOption(OptionValueIngestTargetCatalog, opt.Catalog); err != nil {
			return fail("target_catalog="+opt.Catalog, err)
		}
	}
	if opt.DBSchema != "" {
		if err := s.setOption(OptionValueIngestTargetDBSchema, opt.DBSchema); err != nil {
			return fail("target_db_schema="+opt.DBSchema, err)
		}
	}
	if opt.Temporary {
		if err := s.setOption(OptionValueIngestTemporary, OptionValueEnabled); err != nil {
			return fail("temporary=true", err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(opt.Extra)) {
		if err := s.setOption(k, opt.Extra[k]); err != nil {
			return fail("SetOption("+k+"="+opt.Extra[k]+")", err)
		}
	}
	n, err := s.execute()
	if err != nil {
		return fail("ExecuteUpdate", err)
	}
	return n, nil
}
