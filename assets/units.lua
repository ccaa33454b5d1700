--[[
A number and its percent sign stay on one line.

The posts write a share as "87.5 %", with a space, and a line could break in that space and leave
the "%" alone at the start of the next line. This filter joins the number, a no-break space and
the sign into one word, wherever pandoc reads them (prose, lists, tables, questions). Code is
never touched: it is not made of words.
]]

local NO_BREAK_SPACE = "\u{00A0}"

function Inlines(inlines)
  for i = #inlines - 2, 1, -1 do
    local number, gap, sign = inlines[i], inlines[i + 1], inlines[i + 2]
    if number.t == "Str" and gap.t == "Space" and sign.t == "Str"
        and number.text:match("%d$") and sign.text:match("^%%") then
      inlines[i] = pandoc.Str(number.text .. NO_BREAK_SPACE .. sign.text)
      inlines:remove(i + 2)
      inlines:remove(i + 1)
    end
  end
  return inlines
end
