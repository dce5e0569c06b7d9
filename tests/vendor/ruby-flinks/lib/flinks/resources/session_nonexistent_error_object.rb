# frozen_string_literal: true

module Flinks
  module Resources
    class SessionNonexistentErrorObject < ErrorObject
    end
  end
end
