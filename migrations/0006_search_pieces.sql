-- Migration 0006 (hand-written): the functions compactd_search_document, compactd_search_pieces,
-- compactd_search_head, compactd_search_window and compactd_insert_search_pieces, the trigger
-- archived_messages_search_pieces and the closing INSERT that fills archived_search_pieces; the
-- tables, columns and indexes are drizzle-kit's.
-- The archive's search index holds messages of any accepted size (up to
-- COMPACTD_MAX_MESSAGE_BYTES): a message's search text is indexed in pieces of at most
-- 64 kB (the first one in archived_messages.search_text, every piece of a longer message in
-- archived_search_pieces), instead of one tsvector over the whole text, which Postgres
-- refuses past 1 MB ("string is too long for tsvector").
-- The searchable strings of a message's blocks, one per line: text, tool names, the string
-- values of tool inputs, tool-result text (not ids, block types or image data).
CREATE FUNCTION "compactd_search_document"("content" jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN coalesce((
    select string_agg(s #>> '{}', E'\n')
      from jsonb_path_query(
        jsonb_path_query_array("content", 'strict $[*] ? (@.type == "text").text', '{}', true)
        || jsonb_path_query_array("content", 'strict $[*] ? (@.type == "tool_use").name', '{}', true)
        || jsonb_path_query_array("content", 'strict $[*] ? (@.type == "tool_use").input', '{}', true)
        || jsonb_path_query_array("content", 'strict $[*] ? (@.type == "tool_result").content ? (@.type() == "string")', '{}', true)
        || jsonb_path_query_array("content", 'strict $[*] ? (@.type == "tool_result").content[*] ? (@.type == "text").text', '{}', true),
        'strict $.** ? (@.type() == "string")') s), '');--> statement-breakpoint
-- The search document cut for to_tsvector, whose limits a 2 MB message would pass: a tsvector
-- holds at most 1 MB (unique lexemes and positions: adversarial text makes 4 bytes of it per byte
-- of input), and the parser rescans a run without whitespace once per token in it (quadratic:
-- 55 kB of "ab_cd_…" takes 10 s). Runs longer than `run_bytes` get a space (after an ASCII
-- punctuation byte near the cut when there is one, so words stay whole), and the text is cut
-- into pieces of at most `piece_bytes` (each with the previous piece's last run-sized stretch
-- in front, so a word cut at a piece boundary is whole in the next one). At most `max_pieces`
-- pieces (0: all). Walks bytes (bytea), so each step is O(1) in UTF-8.
CREATE FUNCTION "compactd_search_pieces"("doc" text, "piece_bytes" integer, "max_pieces" integer) RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
declare
  run_bytes constant integer := 128;
  b constant bytea := convert_to(doc, 'UTF8');
  n constant integer := octet_length(b);
  pieces text[] := '{}';
  parts text[] := '{}';
  size integer := 0;
  i integer := 0;
  j integer;
  k integer;
  c integer;
  chunk text;
  spaced boolean;
begin
  -- the common case, one piece with no long run, without the byte walk
  if n <= run_bytes or (n <= piece_bytes and doc !~ '[^[:space:]]{128}') then
    return array[doc];
  end if;
  while i < n loop
    j := least(i + run_bytes, n);
    while j < n and get_byte(b, j) between 128 and 191 loop
      j := j + 1;
    end loop;
    spaced := position('\x20'::bytea in substring(b from i + 1 for j - i)) > 0
      or position('\x0a'::bytea in substring(b from i + 1 for j - i)) > 0
      or position('\x09'::bytea in substring(b from i + 1 for j - i)) > 0
      or j = n;
    if not spaced then
      -- cut after the last ASCII punctuation among the chunk's last 32 bytes, if any
      k := j - 1;
      while k > j - 32 loop
        c := get_byte(b, k);
        exit when c < 128 and not (c between 48 and 57 or c between 65 and 90 or c between 97 and 122);
        k := k - 1;
      end loop;
      if k > j - 32 then
        j := k + 1;
      end if;
    end if;
    chunk := convert_from(substring(b from i + 1 for j - i), 'UTF8');
    if not spaced then
      chunk := chunk || ' ';
    end if;
    if size + octet_length(chunk) > piece_bytes and size > 0 then
      pieces := pieces || array_to_string(parts, '');
      if max_pieces > 0 and cardinality(pieces) >= max_pieces then
        return pieces;
      end if;
      parts := array[parts[cardinality(parts)]];
      size := octet_length(parts[1]);
    end if;
    parts := parts || chunk;
    size := size + octet_length(chunk);
    i := j;
  end loop;
  return pieces || array_to_string(parts, '');
end $$;
--> statement-breakpoint
-- The text archived_messages.search_text indexes: the first piece of the search document.
CREATE FUNCTION "compactd_search_head"("content" jsonb) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN coalesce(("compactd_search_pieces"("compactd_search_document"("content"), 65536, 1))[1], '');
--> statement-breakpoint
-- The stretch of `body` (a search piece, at most 64 kB) a search snippet is drawn from: the
-- first window of about `window_bytes` that matches `query`, else the first that holds any
-- of its lexemes (an AND whose words lie apart), else the first. ts_headline then reads this
-- window only: its cost (and, for phrase queries, its memory, quadratic in the text it reads)
-- never depends on the message's size.
CREATE FUNCTION "compactd_search_window"("body" text, "query" tsquery, "window_bytes" integer) RETURNS text
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
declare
  any_lexeme tsquery;
  fallback text;
  w text;
  v tsvector;
begin
  select string_agg('''' || m[1] || '''', ' | ')::tsquery into any_lexeme
    from regexp_matches(query::text, '''((?:[^'']|'''')+)''', 'g') as m;
  foreach w in array compactd_search_pieces(body, window_bytes, 0) loop
    v := to_tsvector('english'::regconfig, w);
    if v @@ query then
      return w;
    end if;
    if fallback is null and any_lexeme is not null and v @@ any_lexeme then
      fallback := w;
    end if;
  end loop;
  return coalesce(fallback, (compactd_search_pieces(body, window_bytes, 1))[1], '');
end $$;
--> statement-breakpoint
CREATE TABLE "archived_search_pieces" (
	"archive_id" uuid NOT NULL,
	"conversation_id" uuid NOT NULL,
	"piece" integer NOT NULL,
	"body" text NOT NULL,
	"search_text" "tsvector" NOT NULL,
	CONSTRAINT "archived_search_pieces_archive_id_piece_pk" PRIMARY KEY("archive_id","piece")
);
--> statement-breakpoint
-- Postgres 15 cannot change a generated column's expression: drop and re-add it (the table is
-- rewritten and every row's vector recomputed from its content; no row changes otherwise).
ALTER TABLE "archived_messages" drop column "search_text";--> statement-breakpoint
ALTER TABLE "archived_messages" ADD COLUMN "search_text" "tsvector" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, compactd_search_head(content))) STORED;--> statement-breakpoint
CREATE INDEX "archived_search_gin" ON "archived_messages" USING gin ("search_text");--> statement-breakpoint
ALTER TABLE "archived_search_pieces" ADD CONSTRAINT "archived_search_pieces_archive_id_archived_messages_archive_id_fk" FOREIGN KEY ("archive_id") REFERENCES "public"."archived_messages"("archive_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "archived_search_pieces_conversation_idx" ON "archived_search_pieces" USING btree ("conversation_id");--> statement-breakpoint
CREATE INDEX "archived_search_pieces_gin" ON "archived_search_pieces" USING gin ("search_text");--> statement-breakpoint
-- Every piece of the inserted archived rows whose search document is longer than one piece.
-- A message's JSON text is at least as long as its search document, so the (cheaper) JSON
-- length test skips the short ones before any document is read. `offset 0` keeps each lateral
-- from being inlined, so nothing is computed twice.
CREATE FUNCTION "compactd_insert_search_pieces"() RETURNS trigger
  LANGUAGE plpgsql AS $$
begin
  insert into archived_search_pieces (archive_id, conversation_id, piece, body, search_text)
  select r.archive_id, r.conversation_id, p.ord - 1, p.body, to_tsvector('english'::regconfig, p.body)
    from new_rows r
    cross join lateral (select compactd_search_document(r.content) as doc where octet_length(r.content::text) > 60000 offset 0) d
    cross join lateral (select compactd_search_pieces(d.doc, 65536, 0) as pieces where octet_length(d.doc) > 60000 offset 0) s
    cross join lateral unnest(s.pieces) with ordinality as p(body, ord)
   where cardinality(s.pieces) > 1;
  return null;
end $$;
--> statement-breakpoint
CREATE TRIGGER "archived_messages_search_pieces" AFTER INSERT ON "archived_messages"
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "compactd_insert_search_pieces"();
--> statement-breakpoint
-- Rows archived before this migration whose text is longer than one piece (they fitted the old
-- 1 MB vector): their pieces, so a word past the first 64 kB is still found.
INSERT INTO "archived_search_pieces" ("archive_id", "conversation_id", "piece", "body", "search_text")
SELECT r.archive_id, r.conversation_id, p.ord - 1, p.body, to_tsvector('english'::regconfig, p.body)
  FROM "archived_messages" r
  CROSS JOIN LATERAL (SELECT compactd_search_document(r.content) AS doc OFFSET 0) d
  CROSS JOIN LATERAL (SELECT compactd_search_pieces(d.doc, 65536, 0) AS pieces WHERE octet_length(d.doc) > 60000 OFFSET 0) s
  CROSS JOIN LATERAL unnest(s.pieces) WITH ORDINALITY AS p(body, ord)
 WHERE cardinality(s.pieces) > 1;
