--[[
Questions the reader answers on the page (docs/questions.md has the syntax).

A fenced div `::: {.question kind="choice|number|shape"}` becomes a box that works without
JavaScript: the prompt and the options are shown, and the answer, its explanation and the hint for
each wrong answer are folded in a closed <details> "Answer". assets/questions.js (added to the page as
a dependency, with assets/questions.css, only where a question is) turns it into radio buttons or an
input, a Check button, a Show answer button and a live region.

A question written wrongly stops the render, saying which question and what is wrong with it.
]]

local KINDS = { choice = true, number = true, shape = true }
local WRONG, RIGHT = "\u{2610}", "\u{2612}" -- what pandoc makes of `- [ ]` and `- [x]`
local count = 0
local dependency_added = false

local function fail(where, message)
  error("question " .. where .. ": " .. message .. " (docs/questions.md)", 0)
end

local function escape(text)
  return (text:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub('"', "&quot;"))
end

local function raw(html)
  return pandoc.RawBlock("html", html)
end

-- A list item's box: "right" or "wrong" and the first block's inlines without it, or nil.
local function box_of(item)
  local first = item[1]
  if not first or (first.t ~= "Plain" and first.t ~= "Para") then
    return nil
  end
  local inlines = first.content
  if #inlines == 0 or inlines[1].t ~= "Str" or (inlines[1].text ~= WRONG and inlines[1].text ~= RIGHT) then
    return nil
  end
  local mark = inlines[1].text == RIGHT and "right" or "wrong"
  local rest = pandoc.Inlines({})
  for i = 2, #inlines do
    rest:insert(inlines[i])
  end
  while #rest > 0 and (rest[1].t == "Space" or rest[1].t == "SoftBreak") do
    rest:remove(1)
  end
  return mark, rest
end

local function is_box_list(block)
  if block.t ~= "BulletList" or #block.content == 0 then
    return false
  end
  for _, item in ipairs(block.content) do
    if not box_of(item) then
      return false
    end
  end
  return true
end

local function has_class(block, name)
  return block.t == "Div" and block.classes:includes(name)
end

-- The text of an answer with the binding markers (<!--=name-->) and other raw HTML left out.
local function text_of(inlines)
  local text = pandoc.utils.stringify(pandoc.Inlines(inlines):walk({
    RawInline = function() return pandoc.Str("") end,
  }))
  return (text:gsub("^%s+", ""):gsub("%s+$", ""))
end

-- The number a reader or an author writes: "87.9", "87.9 %", "−0.25", "1,024", "1.2e-05".
local function number_of(text)
  local cleaned = text:gsub("\u{2212}", "-"):gsub("[%s\u{a0}\u{202f}]", ""):gsub("%%$", "")
  if cleaned:match("^[-+]?%d%d?%d?,%d%d%d") then
    cleaned = cleaned:gsub(",", "")
  end
  return tonumber(cleaned)
end

-- The `.answer` spans of a block list, in order.
local function answers_in(blocks)
  local found = {}
  pandoc.Blocks(blocks):walk({
    Span = function(span)
      if span.classes:includes("answer") then
        table.insert(found, text_of(span.content))
      end
    end,
  })
  return found
end

-- "If you chose X:" in front of a hint's first paragraph.
local function labelled(label_inlines, blocks)
  local label = pandoc.Span({ pandoc.Strong(label_inlines) }, { class = "question-hint-label" })
  local out = pandoc.Blocks({})
  for _, block in ipairs(blocks) do
    out:insert(block)
  end
  if #out > 0 and (out[1].t == "Para" or out[1].t == "Plain") then
    local content = pandoc.Inlines({ label, pandoc.Space() })
    content:extend(out[1].content)
    out[1] = pandoc.Para(content)
  else
    out:insert(1, pandoc.Para({ label }))
  end
  return out
end

-- Run by Quarto; plain pandoc (`pandoc -L assets/questions.lua`, as the tests do) has no `quarto`.
local function is_html()
  if quarto then
    return quarto.doc.is_format("html")
  end
  return FORMAT:match("html") ~= nil
end

local function add_dependency()
  if dependency_added or not quarto then
    return
  end
  dependency_added = true
  quarto.doc.add_html_dependency({
    name = "questions",
    version = "1",
    scripts = { { path = "questions.js", afterBody = true } },
    stylesheets = { "questions.css" },
  })
end

-- What the question div holds: its prompt, its list, its hint, its explanation.
local function parts_of(div, where, kind)
  local parts = { prompt = pandoc.Blocks({}), list = nil, stuck = nil, explanation = nil }
  for _, block in ipairs(div.content) do
    if has_class(block, "hint") then
      if parts.stuck then fail(where, "has two `::: hint` blocks") end
      parts.stuck = block.content
    elseif has_class(block, "explanation") then
      if parts.explanation then fail(where, "has two `::: explanation` blocks") end
      parts.explanation = block.content
    elseif is_box_list(block) then
      if parts.list then fail(where, "has two lists of `- [ ]` answers") end
      parts.list = block.content
    else
      if parts.list or parts.stuck or parts.explanation then
        fail(where, "has text after its answers, hint or explanation; the prompt comes first")
      end
      parts.prompt:insert(block)
    end
  end
  if #parts.prompt == 0 then fail(where, "has no prompt: write the question before its answers") end
  if not parts.explanation then fail(where, "has no `::: explanation` block") end
  if kind == "choice" and not parts.list then
    fail(where, "is a choice with no list of `- [x]` (right) and `- [ ]` (wrong) options")
  end
  return parts
end

local function choice(div, id, where, parts)
  local options, hints, rights = pandoc.List({}), pandoc.Blocks({}), pandoc.List({})
  for index, item in ipairs(parts.list) do
    local mark, inlines = box_of(item)
    local option_id = id .. "-option-" .. index
    local attributes = { ["data-right"] = mark == "right" and "true" or nil }
    options:insert({ pandoc.Div({ pandoc.Plain(inlines) }, pandoc.Attr(option_id, { "question-option" }, attributes)) })
    local rest = pandoc.Blocks({})
    for i = 2, #item do
      rest:insert(item[i])
    end
    if mark == "right" then
      rights:insert(inlines)
      if #rest > 0 then
        fail(where, "has text under its right option; put it in the explanation")
      end
    elseif #rest > 0 then
      local label = pandoc.Inlines({ pandoc.Str("If you chose ") })
      label:extend(inlines)
      label:insert(pandoc.Str(":"))
      hints:insert(pandoc.Div(labelled(label, rest), pandoc.Attr("", { "question-hint" }, { ["data-for"] = option_id })))
    end
  end
  if #rights == 0 then fail(where, "marks no option right: write `- [x]` before the right one") end
  if #options < 2 then fail(where, "needs two options or more") end
  local key = pandoc.Inlines({ pandoc.Strong({ pandoc.Str(#rights > 1 and "Answers:" or "Answer:") }), pandoc.Space() })
  for i, inlines in ipairs(rights) do
    if i > 1 then key:extend({ pandoc.Space(), pandoc.Str("or"), pandoc.Space() }) end
    key:extend(inlines)
  end
  local list = pandoc.Div({ pandoc.BulletList(options) }, pandoc.Attr("", { "question-options" }))
  return list, pandoc.Blocks({ pandoc.Para(key) }), hints
end

local function typed(div, id, where, parts, kind)
  local answers = answers_in(parts.explanation)
  if #answers == 0 then
    fail(where, "has no answer: mark it in the explanation as `[87.9]{.answer}`")
  end
  for _, answer in ipairs(answers) do
    if answer == "" then fail(where, "has an empty `.answer` span") end
    if kind == "number" and not number_of(answer) then
      fail(where, "has an answer that is not a number: " .. answer)
    end
  end
  local tolerance = div.attributes.tolerance
  if tolerance and (kind ~= "number" or not number_of(tolerance) or number_of(tolerance) < 0) then
    fail(where, kind == "number" and "has a tolerance that is not a number: " .. tolerance
      or "has a tolerance, which only a number question takes")
  end
  local hints = pandoc.Blocks({})
  for _, item in ipairs(parts.list or {}) do
    local mark, inlines = box_of(item)
    if mark == "right" then
      fail(where, "lists a right answer `- [x]`: a " .. kind .. " question's answer is the `.answer` span of its explanation")
    end
    local value = text_of(inlines)
    if kind == "number" and not number_of(value) then
      fail(where, "lists a wrong answer that is not a number: " .. value)
    end
    local rest = pandoc.Blocks({})
    for i = 2, #item do
      rest:insert(item[i])
    end
    if #rest == 0 then
      fail(where, "lists the wrong answer " .. value .. " with no hint under it")
    end
    local label = pandoc.Inlines({ pandoc.Str("If you answered ") })
    label:extend(inlines)
    label:insert(pandoc.Str(":"))
    hints:insert(pandoc.Div(labelled(label, rest), pandoc.Attr("", { "question-hint" }, { ["data-value"] = value })))
  end
  return nil, pandoc.Blocks({}), hints
end

local function question(div)
  if not div.classes:includes("question") then
    return nil
  end
  count = count + 1
  local id = div.identifier ~= "" and div.identifier or ("question-" .. count)
  local kind = div.attributes.kind or "choice"
  local where = "#" .. id
  if not KINDS[kind] then
    fail(where, 'has kind="' .. kind .. '"; a kind is "choice", "number" or "shape"')
  end
  local parts = parts_of(div, where, kind)
  local options, key, hints
  if kind == "choice" then
    options, key, hints = choice(div, id, where, parts)
  else
    options, key, hints = typed(div, id, where, parts, kind)
  end

  if not is_html() then
    -- Elsewhere (a PDF, say): the prompt, the options, then the answer under its own heading.
    local out = pandoc.Blocks({})
    out:extend(parts.prompt)
    if options then out:insert(options) end
    out:insert(pandoc.Para({ pandoc.Strong({ pandoc.Str("Answer") }) }))
    out:extend(key)
    out:extend(parts.explanation)
    out:extend(hints)
    return pandoc.Div(out, pandoc.Attr(id, { "question" }))
  end

  add_dependency()
  local title = div.attributes.title or "Question"
  local attributes = {
    ["data-kind"] = kind,
    ["data-tolerance"] = div.attributes.tolerance,
    ["data-unit"] = div.attributes.unit,
    role = "group",
    ["aria-labelledby"] = id .. "-title",
    ["aria-describedby"] = id .. "-prompt",
  }
  local out = pandoc.Blocks({
    raw('<p class="question-title" id="' .. id .. '-title">' .. escape(title) .. "</p>"),
    pandoc.Div(parts.prompt, pandoc.Attr(id .. "-prompt", { "question-prompt" })),
  })
  if options then out:insert(options) end
  if parts.stuck then
    out:insert(raw('<details class="question-stuck"><summary>Hint</summary>'))
    out:insert(pandoc.Div(parts.stuck, pandoc.Attr("", { "question-stuck-text" })))
    out:insert(raw("</details>"))
  end
  out:insert(raw('<details class="question-answer"><summary>Answer</summary>'))
  if #key > 0 then
    out:insert(pandoc.Div(key, pandoc.Attr("", { "question-key" })))
  end
  out:insert(pandoc.Div(parts.explanation, pandoc.Attr("", { "question-explanation" })))
  if #hints > 0 then
    out:insert(pandoc.Div(hints, pandoc.Attr("", { "question-hints" })))
  end
  out:insert(raw("</details>"))
  return pandoc.Div(out, pandoc.Attr(id, { "question", "question-" .. kind }, attributes))
end

return {
  { Div = question },
}
