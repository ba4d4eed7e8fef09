ALTER TABLE "archived_messages" ADD COLUMN "search_text" "tsvector" GENERATED ALWAYS AS (to_tsvector('english'::regconfig, (
  jsonb_path_query_array(content, 'strict $[*] ? (@.type == "text").text', '{}', true)
  || jsonb_path_query_array(content, 'strict $[*] ? (@.type == "tool_use").name', '{}', true)
  || jsonb_path_query_array(content, 'strict $[*] ? (@.type == "tool_use").input', '{}', true)
  || jsonb_path_query_array(content, 'strict $[*] ? (@.type == "tool_result").content ? (@.type() == "string")', '{}', true)
  || jsonb_path_query_array(content, 'strict $[*] ? (@.type == "tool_result").content[*] ? (@.type == "text").text', '{}', true)))) STORED;--> statement-breakpoint
CREATE INDEX "archived_search_gin" ON "archived_messages" USING gin ("search_text");