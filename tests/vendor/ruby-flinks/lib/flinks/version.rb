# frozen_string_literal: true

module Flinks
  VERSION = '0.2.3'
end
