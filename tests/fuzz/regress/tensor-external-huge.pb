
(oolp