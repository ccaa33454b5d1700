--[[
The models' special tokens are words on this site, never HTML.

Pandoc reads a bare <end> in markdown (in prose, or in a table a cell printed as Markdown, such as
a post's re-run table) as a raw HTML tag, and the browser drops the tag it does not know: the page
showed "smallest P() where it is due" and "hundred on ". This filter gives such a tag back as the
text it was, wherever it comes from. Tokens written in backticks are code already and never reach it.
]]

local TOKENS = { start = true, ["end"] = true, pad = true }

function RawInline(element)
  if element.format ~= "html" then
    return nil
  end
  local name = element.text:match("^<(%a+)>$")
  if name and TOKENS[name] then
    return pandoc.Str(element.text)
  end
  return nil
end
